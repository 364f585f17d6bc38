// The Slurm executor's pieces that need no cluster: the batch script (run by a real bash, its
// words must arrive unchanged whatever they hold) and the mapping of Slurm's final job states.
#include "tune/adapters/executor/slurm_executor.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tune/adapters/executor/supervisor.hpp"
#include "tune/adapters/executor/trial_exit.hpp"

namespace {

namespace fs = std::filesystem;
using tune::adapters::ExitKind;
using tune::adapters::SlurmJobView;
using tune::adapters::SlurmOptions;
using tune::adapters::TrialExit;
using tune::adapters::TrialLaunch;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(TUNE_TEST_TMPDIR) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SlurmBatchScript, PassesEveryWordUnchangedToTheSupervisor) {
  const fs::path dir = fresh_dir("slurm-script/it's a \"dir\" $HOME");
  // A stand-in supervisor that prints each argument it receives between brackets.
  SlurmOptions options{.supervisor_command = {"/usr/bin/printf", "[%s]\\n"},
                       .extra_directives = {"--constraint=a100", "#SBATCH --exclusive"},
                       .setup = "source /dev/null && echo setup-ran"};  // bash's source (dash has none)
  const std::vector<std::string> argv{"python3", "train.py", "--name", "it's; rm -rf / $(id) `id` \"q\" \\ *",
                                      "two\nlines", "", "{x}"};
  const TrialLaunch trial{.id = "7", .dir = dir, .argv = argv, .timeout = std::chrono::milliseconds(1500),
                          .grace = std::chrono::milliseconds(250), .attempt = 2};
  const std::string script = tune::adapters::slurm_batch_script(options, trial, {"sbatch", "--parsable"});
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u) << script;
  EXPECT_NE(script.find("\n#SBATCH --constraint=a100\n#SBATCH --exclusive\n"), std::string::npos) << script;
  // #SBATCH lines must come before the first command, or sbatch ignores them.
  EXPECT_LT(script.find("#SBATCH --exclusive"), script.find("\ncd "));
  std::ofstream(dir / "slurm.sh") << script;

  using tune::adapters::shell_quote;
  const std::string command =
      "cd / && /bin/bash " + shell_quote((dir / "slurm.sh").string()) + " > " + shell_quote((dir / "out").string()) + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << slurp(dir / "out");
  std::string expected = "setup-ran\n[" + dir.string() + "]\n[1500]\n[250]\n[--]\n";
  for (const std::string& a : argv) expected += "[" + a + "]\n";
  EXPECT_EQ(slurp(dir / "out"), expected);
}

TEST(SlurmBatchScript, StopsWithAClearMessageWhenTheDirectoryIsNotVisible) {
  const fs::path dir = fresh_dir("slurm-script-missing");
  const SlurmOptions options{.supervisor_command = {"/bin/true"}};
  const TrialLaunch trial{.id = "1", .dir = dir / "not-here", .argv = {"x"}};
  std::ofstream(dir / "slurm.sh") << tune::adapters::slurm_batch_script(options, trial, {"sbatch"});
  const std::string command = "/bin/sh '" + (dir / "slurm.sh").string() + "' 2> '" + (dir / "err").string() + "'";
  const int status = std::system(command.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 97);
  EXPECT_NE(slurp(dir / "err").find("must be on a file system shared with the compute nodes"), std::string::npos)
      << slurp(dir / "err");
}

TrialExit record(ExitKind kind, int code = 0, int signal = 0) {
  return TrialExit{.kind = kind, .code = code, .signal = signal, .started_at = 1, .finished_at = 2, .message = "m"};
}

TEST(SlurmOutcome, MapsEveryFinalStateAndWaitsOnTheOthers) {
  const fs::path dir = fresh_dir("slurm-outcome");
  auto outcome = [&](const std::string& state, std::optional<TrialExit> r, bool ours = false) {
    return tune::adapters::slurm_outcome(SlurmJobView{.job = "42", .state = state, .reason = "None", .time_limit = "1:00"},
                                         r, ours, dir);
  };
  for (const char* active : {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "REQUEUED"})
    EXPECT_FALSE(outcome(active, std::nullopt)) << active;

  // A job that ended by itself: the supervisor's record, whatever it says.
  EXPECT_EQ(outcome("COMPLETED", record(ExitKind::exited, 3))->code, 3);
  EXPECT_EQ(outcome("FAILED", record(ExitKind::signaled, 0, 11))->kind, ExitKind::signaled);
  // No record: the job failed before the trial started; no output at all: the directory is not shared.
  const auto unshared = outcome("FAILED", std::nullopt);
  EXPECT_EQ(unshared->kind, ExitKind::launch_failed);
  EXPECT_NE(unshared->message.find("shared with the compute nodes"), std::string::npos) << unshared->message;
  std::ofstream(dir / "slurm.out") << "setup\n/bin/sh: 3: module: not found\n";
  const auto early = outcome("FAILED", std::nullopt);
  EXPECT_EQ(early->kind, ExitKind::launch_failed);
  EXPECT_NE(early->message.find("module: not found"), std::string::npos) << early->message;

  // Slurm ended the job: its word, not the record of the command it killed; a success still counts.
  EXPECT_EQ(outcome("TIMEOUT", record(ExitKind::signaled, 0, 15))->kind, ExitKind::timeout);
  EXPECT_NE(outcome("TIMEOUT", std::nullopt)->message.find("TIMEOUT"), std::string::npos);
  EXPECT_EQ(outcome("TIMEOUT", record(ExitKind::exited, 0))->kind, ExitKind::exited);
  EXPECT_EQ(outcome("CANCELLED", record(ExitKind::exited, 143))->kind, ExitKind::aborted);
  EXPECT_EQ(outcome("CANCELLED", std::nullopt, true)->kind, ExitKind::cancelled);
  EXPECT_EQ(outcome("CANCELLED by 0", record(ExitKind::cancelled), true)->kind, ExitKind::cancelled);
  EXPECT_EQ(outcome("NODE_FAIL", std::nullopt)->kind, ExitKind::lost);
  EXPECT_EQ(outcome("PREEMPTED", record(ExitKind::cancelled))->kind, ExitKind::lost);
  EXPECT_EQ(outcome("BOOT_FAIL", std::nullopt)->kind, ExitKind::lost);
  const auto oom = outcome("OUT_OF_MEMORY", record(ExitKind::signaled, 0, 9));
  EXPECT_EQ(oom->kind, ExitKind::aborted);
  EXPECT_NE(oom->message.find("executor.memory"), std::string::npos) << oom->message;
  EXPECT_EQ(outcome("DEADLINE", std::nullopt)->kind, ExitKind::aborted);

  // A scancel from outside: squeue's reason is the pending job's (it read "cancelled outside the
  // tuner (scancel) (Priority)", as if Priority were why it was cancelled).
  const auto cancelled = [&](const std::string& reason) {
    return tune::adapters::slurm_outcome(SlurmJobView{.job = "16", .state = "CANCELLED", .reason = reason}, std::nullopt,
                                         false, dir)->message;
  };
  EXPECT_EQ(cancelled("Priority"), "Slurm job 16 was cancelled outside the tuner (scancel) while pending (Priority)");
  EXPECT_EQ(cancelled("None"), "Slurm job 16 was cancelled outside the tuner (scancel)");
}

TEST(ShellQuote, KeepsEveryByteOfAWord) {
  EXPECT_EQ(tune::adapters::shell_quote("a b"), "'a b'");
  EXPECT_EQ(tune::adapters::shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(tune::adapters::shell_quote(""), "''");
}


// Fake Slurm client commands (shell scripts in `d`): each call appends its arguments to
// d/calls.log; sbatch and squeue answer as the controller that does not answer while d/down exists.
struct FakeSlurm {
  explicit FakeSlurm(const fs::path& d) : dir(d) {
    write("sbatch", "echo \"sbatch $*\" >> '" + (d / "calls.log").string() + "'\n"
          "if [ -e '" + (d / "down").string() + "' ]; then echo 'sbatch: error: Batch job submission failed: "
          "Unable to contact slurm controller (connect failure)' >&2; exit 1; fi\necho 77\n");
    write("squeue", "echo \"squeue $*\" >> '" + (d / "calls.log").string() + "'\n"
          "if [ -e '" + (d / "down").string() + "' ]; then echo 'slurm_load_jobs error: Unable to contact slurm "
          "controller (connect failure)' >&2; exit 1; fi\ncat '" + (d / "squeue.out").string() + "' 2>/dev/null\n");
    write("scancel", "echo \"scancel $*\" >> '" + (d / "calls.log").string() + "'\n");
  }
  void write(const std::string& name, const std::string& body) const {
    std::ofstream(dir / name) << "#!/bin/sh\n" << body;
    fs::permissions(dir / name, fs::perms::owner_all);
  }
  SlurmOptions options() const {
    return SlurmOptions{.supervisor_command = {"/bin/true"}, .job_name = "c", .sbatch = (dir / "sbatch").string(),
                        .squeue = (dir / "squeue").string(), .scancel = (dir / "scancel").string()};
  }
  int calls(const std::string& program) const {
    std::istringstream lines(slurp(dir / "calls.log"));
    int n = 0;
    for (std::string line; std::getline(lines, line);) n += line.rfind(program + " ", 0) == 0;
    return n;
  }
  fs::path dir;
};

// sbatch splits a #SBATCH line at blanks outside quotes and drops quotes: an --option=value with
// blanks or a quote in its value is quoted for it, and one the user quoted whole is kept.
TEST(SlurmBatchScript, QuotesAnExtraOptionsValueSoThatSbatchReadsItWhole) {
  const SlurmOptions options{.supervisor_command = {"/bin/tune", "__supervise"},
                             .extra_directives = {"--comment=lr sweep 3, it's ok", "--comment=say \"hi\" now",
                                                  "--comment=\"already quoted\"", "#SBATCH --exclusive", "--nodes 2",
                                                  "--constraint=a100"}};
  const TrialLaunch trial{.id = "0", .dir = "/tmp/c/trials/0", .argv = {"x"}};
  const std::string script = tune::adapters::slurm_batch_script(options, trial, {"sbatch"});
  for (const char* line : {"#SBATCH --comment=\"lr sweep 3, it's ok\"\n", "#SBATCH --comment='say \"hi\" now'\n",
                           "#SBATCH --comment=\"already quoted\"\n", "#SBATCH --exclusive\n", "#SBATCH --nodes 2\n",
                           "#SBATCH --constraint=a100\n"})
    EXPECT_NE(script.find(line), std::string::npos) << line << " not in\n" << script;
  // A value holding both kinds of quote cannot be carried by a #SBATCH line: it goes on sbatch's
  // command line (the Slurm test AnExtraOptionWhoseValueHoldsSpacesReachesSlurmWhole sees it arrive).
  SlurmOptions both = options;
  both.extra_directives = {"--comment=say \"hi\", it's ok"};
  const std::string without = tune::adapters::slurm_batch_script(both, trial, {"sbatch"});
  EXPECT_EQ(without.find("#SBATCH --comment"), std::string::npos) << without;
}

// A job whose supervisor was killed on the node (kill -9, the OOM killer) while the trial ran ends
// FAILED with no exit record: it was reported as "could not start: ... before the trial started",
// although the trial had started (the supervisor's record and the trainer's output were there), and
// the trial failed for good. It is lost: it runs again, up to executor.retries.
TEST(SlurmOutcome, AJobWhoseSupervisorDiedAfterTheTrialStartedIsLostNotNeverStarted) {
  const fs::path dir = fresh_dir("slurm-supervisor-died");
  std::ofstream(dir / "slurm.out").close();
  tune::adapters::write_supervisor_record(dir, {.supervisor_pid = 123, .process_group = 124, .started_at = 1000.0});
  for (const char* state : {"FAILED", "COMPLETED"}) {
    const auto died = tune::adapters::slurm_outcome(
        SlurmJobView{.job = "47", .state = state, .reason = "JobLaunchFailure", .time_limit = "1:00"}, std::nullopt, false, dir);
    ASSERT_TRUE(died) << state;
    EXPECT_EQ(died->kind, ExitKind::lost) << state;
    EXPECT_EQ(died->started_at, 1000.0) << state;
    EXPECT_EQ(died->message.find("before the trial started"), std::string::npos) << died->message;
    EXPECT_NE(died->message.find("Slurm job 47"), std::string::npos) << died->message;
    EXPECT_NE(died->message.find("supervisor"), std::string::npos) << died->message;
  }
}

// A controller that did not answer (restarting, overloaded) stopped the whole campaign with "the
// cluster refused the job ... check executor.partition, ...", which is neither what happened nor
// the fix. It defers the launch instead, and the next launch of that attempt first looks for a job
// the controller accepted although its answer was lost, so the trial is never submitted twice.
TEST(SlurmExecutorLaunch, AControllerThatDoesNotAnswerDefersTheLaunchAndNeverSubmitsTwice) {
  const fs::path d = fresh_dir("slurm-controller-down");
  const FakeSlurm slurm(d);
  tune::adapters::SlurmExecutor executor(slurm.options());
  const TrialLaunch trial{.id = "3", .dir = d / "trials" / "3", .argv = {"/bin/true"}, .attempt = 1};
  std::ofstream(d / "down").close();
  try {
    executor.launch(trial);
    ADD_FAILURE() << "launch did not throw";
  } catch (const tune::adapters::LaunchDeferred& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("the Slurm controller did not answer sbatch"), std::string::npos) << message;
    EXPECT_NE(message.find("Unable to contact slurm controller"), std::string::npos) << message;
    EXPECT_EQ(message.find("refused"), std::string::npos) << message;
  }
  EXPECT_EQ(executor.running(), 0u);
  // Still down: the lookup fails, and nothing is submitted.
  EXPECT_THROW(executor.launch(trial), tune::adapters::LaunchDeferred);
  EXPECT_EQ(slurm.calls("sbatch"), 1);
  // Back, and the first sbatch had been accepted after all (job 55, this trial's name and directory):
  // that job is followed, and no second one submitted. Job 99 of that name and directory was
  // submitted before (an earlier campaign in this directory): it is not this trial's.
  fs::remove(d / "down");
  char now[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  std::ofstream(d / "squeue.out") << "55|" << now << "|" << (d / "trials" / "3").string() << "\n"
                                  << "99|2020-01-01T00:00:00|" << (d / "trials" / "3").string() << "\n";
  EXPECT_EQ(executor.launch(trial), "55");
  EXPECT_EQ(executor.job_of("3"), "55");
  EXPECT_EQ(slurm.calls("sbatch"), 1);
  EXPECT_NE(slurp(d / "calls.log").find("--name=c.3.1"), std::string::npos);
  // Another trial whose sbatch was not answered and that Slurm does not know is submitted (job 77).
  const TrialLaunch other{.id = "4", .dir = d / "trials" / "4", .argv = {"/bin/true"}, .attempt = 1};
  std::ofstream(d / "down").close();
  EXPECT_THROW(executor.launch(other), tune::adapters::LaunchDeferred);
  fs::remove(d / "down");
  EXPECT_EQ(executor.launch(other), "77");
  EXPECT_EQ(slurm.calls("sbatch"), 3);
}

// sbatch on a machine with no Slurm configuration (no slurm.conf, no SLURM_CONF) refuses every job
// the same way, as Debian's sbatch 22.05 prints it here; the job's options were blamed for it.
TEST(SlurmExecutorLaunch, NoSlurmConfigurationIsSaidAsSuchNotAsTheJobsOptions) {
  const fs::path d = fresh_dir("slurm-no-configuration");
  const FakeSlurm slurm(d);
  slurm.write("sbatch", "echo 'sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host' >&2\n"
                        "echo 'sbatch: error: fetch_config: DNS SRV lookup failed' >&2\n"
                        "echo 'sbatch: fatal: Could not establish a configuration source' >&2\nexit 1\n");
  tune::adapters::SlurmExecutor executor(slurm.options());
  try {
    executor.launch({.id = "0", .dir = d / "trials" / "0", .argv = {"/bin/true"}, .attempt = 1});
    ADD_FAILURE() << "launch did not throw";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("sbatch finds no Slurm configuration on this machine"), std::string::npos) << message;
    EXPECT_NE(message.find("SLURM_CONF"), std::string::npos) << message;
    EXPECT_EQ(message.find("executor.partition"), std::string::npos) << message;
  }
}

// The same lost answer when the tuner dies before the controller is back: the next session's
// executor knew nothing of the first sbatch and submitted the trial a second time beside the job
// the controller had accepted. The unanswered submission is recorded in the trial's directory.
TEST(SlurmExecutorLaunch, AnUnansweredSubmissionOfAnEarlierSessionIsLookedUpNotDoubled) {
  const fs::path d = fresh_dir("slurm-controller-down-across-sessions");
  const FakeSlurm slurm(d);
  const TrialLaunch trial{.id = "3", .dir = d / "trials" / "3", .argv = {"/bin/true"}, .attempt = 1};
  std::ofstream(d / "down").close();
  {
    tune::adapters::SlurmExecutor dying(slurm.options());
    EXPECT_THROW(dying.launch(trial), tune::adapters::LaunchDeferred);
  }
  EXPECT_TRUE(fs::exists(d / "trials" / "3" / tune::adapters::kUnansweredSubmissionFile));
  fs::remove(d / "down");
  char now[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  std::ofstream(d / "squeue.out") << "55|" << now << "|" << (d / "trials" / "3").string() << "\n";
  tune::adapters::SlurmExecutor next(slurm.options());
  EXPECT_EQ(next.launch(trial), "55");
  EXPECT_EQ(slurm.calls("sbatch"), 1);
  EXPECT_FALSE(fs::exists(d / "trials" / "3" / tune::adapters::kUnansweredSubmissionFile));
  // The record of attempt 1 says nothing of attempt 2, which is submitted without a lookup by name.
  std::ofstream(d / "down").close();
  const TrialLaunch second{.id = "4", .dir = d / "trials" / "4", .argv = {"/bin/true"}, .attempt = 1};
  {
    tune::adapters::SlurmExecutor dying(slurm.options());
    EXPECT_THROW(dying.launch(second), tune::adapters::LaunchDeferred);
  }
  fs::remove(d / "down");
  tune::adapters::SlurmExecutor again(slurm.options());
  TrialLaunch retry = second;
  retry.attempt = 2;
  EXPECT_EQ(again.launch(retry), "77");
  EXPECT_EQ(slurm.calls("sbatch"), 3);
  EXPECT_EQ(slurp(d / "calls.log").find("--name=c.4.2"), std::string::npos) << "attempt 2 was looked up by name";
}

// A job the cluster refuses is still an error that names the options to check.
TEST(SlurmExecutorLaunch, ARefusedJobIsAnErrorNotADeferral) {
  const fs::path d = fresh_dir("slurm-refused-fake");
  const FakeSlurm slurm(d);
  slurm.write("sbatch", "echo 'sbatch: error: invalid partition specified: nope' >&2; exit 1\n");
  tune::adapters::SlurmExecutor executor(slurm.options());
  const TrialLaunch trial{.id = "0", .dir = d / "trials" / "0", .argv = {"/bin/true"}, .attempt = 1};
  try {
    executor.launch(trial);
    ADD_FAILURE() << "launch did not throw";
  } catch (const tune::adapters::LaunchDeferred& e) {
    ADD_FAILURE() << "deferred: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the cluster refused the job"), std::string::npos) << e.what();
  }
  // A limit of jobs per user (Slurm's words with accounting) names executor.workers, which the list
  // of options to check left out.
  slurm.write("sbatch", "echo 'sbatch: error: QOSMaxSubmitJobPerUserLimit' >&2\necho 'sbatch: error: Batch job "
                        "submission failed: Job violates accounting/QOS policy (job submit limit, user'\\''s size "
                        "and/or time limits)' >&2; exit 1\n");
  try {
    executor.launch(trial);
    ADD_FAILURE() << "launch did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("QOSMaxSubmitJobPerUserLimit"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("set executor.workers below the limit"), std::string::npos) << e.what();
  }
}

// A limit of jobs per user reached by the campaign's own jobs ended the session, leaving its jobs in
// flight to a resume that hit the limit again: the trial waits for one of them to end.
TEST(SlurmExecutorLaunch, AJobsPerUserLimitReachedByTheCampaignsJobsDefersTheLaunch) {
  const fs::path d = fresh_dir("slurm-submit-limit");
  const FakeSlurm slurm(d);
  tune::adapters::SlurmExecutor executor(slurm.options());
  ASSERT_EQ(executor.launch({.id = "0", .dir = d / "trials" / "0", .argv = {"/bin/true"}, .attempt = 1}), "77");
  slurm.write("sbatch", "echo 'sbatch: error: QOSMaxSubmitJobPerUserLimit' >&2\necho 'sbatch: error: Batch job "
                        "submission failed: Job violates accounting/QOS policy' >&2; exit 1\n");
  try {
    executor.launch({.id = "1", .dir = d / "trials" / "1", .argv = {"/bin/true"}, .attempt = 1});
    ADD_FAILURE() << "launch did not throw";
  } catch (const tune::adapters::LaunchDeferred& e) {
    EXPECT_NE(std::string(e.what()).find("the trial is submitted when one of the 1 in flight ends (executor.workers: 1 "
                                         "avoids the wait)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(executor.running(), 1u);
}

// A tuner that exits before it collects the jobs it cancelled (a third Ctrl-C, kill -9 after tune
// stop) left CANCELLED jobs, which the next session failed as "cancelled outside the tuner": trials
// it had said would run again were lost. The request is recorded in the trial directory before
// scancel; a job someone else cancelled is still failed.
TEST(SlurmExecutorCancel, AJobTheTunerCancelledInAnEarlierSessionRunsItsTrialAgain) {
  const fs::path d = fresh_dir("slurm-cancelled-across-sessions");
  const FakeSlurm slurm(d);
  const fs::path ours = d / "trials" / "0", theirs = d / "trials" / "1";
  {
    tune::adapters::SlurmExecutor dying(slurm.options());
    ASSERT_EQ(dying.launch({.id = "0", .dir = ours, .argv = {"/bin/true"}, .attempt = 1}), "77");
    dying.cancel("0");
  }
  EXPECT_EQ(slurp(ours / tune::adapters::kCancelRequestedFile), "77\n");
  EXPECT_NE(slurp(d / "calls.log").find("scancel 77"), std::string::npos);
  fs::create_directories(theirs);
  std::ofstream(d / "squeue.out") << "77|CANCELLED|None|1:00|" << ours.string() << "\n"
                                  << "78|CANCELLED|None|1:00|" << theirs.string() << "\n";
  tune::adapters::SlurmExecutor next(slurm.options());
  ASSERT_TRUE(next.attach({.id = "0", .dir = ours, .attempt = 1, .job = "77"}));
  ASSERT_TRUE(next.attach({.id = "1", .dir = theirs, .attempt = 1, .job = "78"}));
  std::map<std::string, TrialExit> exits;
  for (const auto& f : next.poll()) exits[f.id] = f.exit;
  ASSERT_EQ(exits.size(), 2u);
  EXPECT_EQ(exits.at("0").kind, ExitKind::cancelled) << exits.at("0").message;
  EXPECT_EQ(exits.at("1").kind, ExitKind::aborted) << exits.at("1").message;
  EXPECT_NE(exits.at("1").message.find("cancelled outside the tuner"), std::string::npos) << exits.at("1").message;
  // The next attempt's launch clears the record: it says nothing of the new job.
  tune::adapters::SlurmExecutor again(slurm.options());
  ASSERT_EQ(again.launch({.id = "0", .dir = ours, .argv = {"/bin/true"}, .attempt = 2}), "77");
  EXPECT_FALSE(fs::exists(ours / tune::adapters::kCancelRequestedFile));
}

// Slurm forgets a finished job after MinJobAge; a tuner resumed later decided from the supervisor's
// record alone, which says only "signalled": a run Slurm ended at its time limit ran again (or failed
// as "killed by signal 15"), and one a user cancelled ran again. Slurm's own line in slurm.out says
// which it was.
TEST(SlurmExecutorForgottenJob, SlurmsLineInTheJobOutputDecidesHowItEnded) {
  const fs::path d = fresh_dir("slurm-forgotten-jobs");
  const FakeSlurm slurm(d);
  std::ofstream(d / "squeue.out").close();  // squeue knows none of the jobs
  struct Case {
    std::string id, job, line;
    ExitKind record_kind;
    bool cancelled_by_tuner;
    ExitKind expected;
    std::string fragment;
  };
  const std::string prefix = "slurmstepd-node1: error: *** JOB ";
  const std::vector<Case> cases{
      {"0", "90", prefix + "90 ON node1 CANCELLED AT 2026-11-25T01:05:36 DUE TO TIME LIMIT ***", ExitKind::cancelled,
       false, ExitKind::timeout, "Slurm job 90 reached its time limit (slurm.out: *** JOB 90 ON node1"},
      {"1", "91", prefix + "91 ON node1 CANCELLED AT 2026-11-25T01:05:36 DUE TO TIME LIMIT ***", ExitKind::signaled,
       false, ExitKind::timeout, "raise executor.time"},
      {"2", "92", prefix + "92 ON node1 CANCELLED AT 2026-11-25T01:05:36 ***", ExitKind::cancelled, false,
       ExitKind::aborted, "Slurm job 92 was cancelled outside the tuner (scancel; slurm.out: "},
      {"3", "93", prefix + "93 ON node1 CANCELLED AT 2026-11-25T01:05:36 ***", ExitKind::cancelled, true,
       ExitKind::cancelled, "cancelled by the tuner"},
      {"4", "94", prefix + "94 ON node1 CANCELLED AT 2026-11-25T01:05:36 DUE TO PREEMPTION ***", ExitKind::cancelled,
       false, ExitKind::lost, "Slurm job 94 was ended by Slurm"},
      // No line of Slurm's: as before, a signalled record is a lost run.
      {"5", "95", "some setup output", ExitKind::cancelled, false, ExitKind::lost, "Slurm no longer knows why"},
  };
  tune::adapters::SlurmExecutor executor(slurm.options());
  for (const Case& c : cases) {
    const fs::path dir = d / "trials" / c.id;
    fs::create_directories(dir);
    std::ofstream(dir / tune::adapters::kJobOutputFile) << "setting up\n" << c.line << "\n";
    tune::adapters::write_trial_exit(dir, TrialExit{.kind = c.record_kind, .signal = 15, .started_at = 1.0,
                                                    .finished_at = 2.0, .message = "the supervisor received SIGTERM"});
    if (c.cancelled_by_tuner) std::ofstream(dir / tune::adapters::kCancelRequestedFile) << c.job << "\n";
    ASSERT_TRUE(executor.attach({.id = c.id, .dir = dir, .attempt = 1, .job = c.job}));
  }
  std::map<std::string, TrialExit> exits;
  for (const auto& f : executor.poll()) exits[f.id] = f.exit;
  ASSERT_EQ(exits.size(), cases.size());
  for (const Case& c : cases) {
    EXPECT_EQ(exits.at(c.id).kind, c.expected) << c.id << ": " << exits.at(c.id).message;
    EXPECT_NE(exits.at(c.id).message.find(c.fragment), std::string::npos) << c.id << ": " << exits.at(c.id).message;
  }
}

// Without EnforcePartLimits (Slurm's default) sbatch accepts a job over its partition's limits, and it
// pends for ever: the tuner waited with no word of why. A reason that does not pass is said, once.
TEST(SlurmExecutorPending, AJobThatCannotStartIsSaidOnceWithTheOptionToChange) {
  const fs::path d = fresh_dir("slurm-pending-for-ever");
  const FakeSlurm slurm(d);
  std::vector<std::string> warnings;
  SlurmOptions options = slurm.options();
  options.poll_interval = std::chrono::milliseconds(0);
  options.warn = [&](const std::string& w) { warnings.push_back(w); };
  tune::adapters::SlurmExecutor executor(options);
  const fs::path waits = d / "trials" / "0", never = d / "trials" / "1";
  fs::create_directories(waits);
  fs::create_directories(never);
  ASSERT_TRUE(executor.attach({.id = "0", .dir = waits, .attempt = 1, .job = "80"}));
  ASSERT_TRUE(executor.attach({.id = "1", .dir = never, .attempt = 1, .job = "81"}));
  std::ofstream(d / "squeue.out") << "80|PENDING|Priority|1:00:00|" << waits.string() << "\n"
                                  << "81|PENDING|PartitionTimeLimit|2:00:00|" << never.string() << "\n";
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(executor.poll().empty());
    std::this_thread::sleep_for(std::chrono::milliseconds(600));  // past the 500 ms between queries
  }
  ASSERT_EQ(warnings.size(), 1u) << (warnings.empty() ? "" : warnings.back());
  EXPECT_NE(warnings[0].find("trial 1: Slurm job 81 is pending (PartitionTimeLimit) and will not start as it is: "
                             "its time limit is above what the partition or your association allows: lower "
                             "executor.time"),
            std::string::npos)
      << warnings[0];
  EXPECT_GE(slurm.calls("squeue"), 2);
}

}  // namespace
