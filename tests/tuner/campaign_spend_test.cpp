// The notes added to why a campaign whose cost budget is spent ended.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "tuner/campaign/campaign_spend.hpp"

namespace tune::tuner {
namespace {

// A new campaign of `train` over x in [0, 1], with the given resolution and budget lines.
CampaignState campaign_with(const std::string& resolution_and_budget) {
  return CampaignState::create(
      campaign_from_yaml(YAML::Load("name: c\ncommand: [train, \"{epochs}\", \"{x}\"]\n"
                                    "space: {x: {type: float, low: 0, high: 1}}\n" + resolution_and_budget),
                         "c.yaml"),
      0.0);
}

// Every full run hit its time limit: the budget went on runs that could not finish, and the note
// says so and names the setting (cmets chose the full run again and again, and the end said only
// that no full run had completed).
TEST(CampaignSpendNotes, FullRunsThatAllTimedOutNameTheirLimit) {
  CampaignState s = campaign_with("resolution: {param: epochs, levels: [1, 3], timeout: [5s, 8s]}\nbudget: {cost: 60}\n");
  const auto timed_out = [](double seconds) {
    return adapters::TrialExit{.kind = adapters::ExitKind::timeout, .started_at = 0, .finished_at = seconds};
  };
  s.study.enqueue({{"x", 0.5}}, 0);
  s.study.enqueue({{"x", 0.3}}, 1);
  s.study.enqueue({{"x", 0.2}}, 1);
  ASSERT_TRUE(s.study.ask());
  s.study.tell(0, 1.0, 2.0);
  for (std::uint64_t id : {1, 2}) {
    ASSERT_TRUE(s.study.ask()) << s.study.stop_reason();
    s.study.fail(id, "timed out after 8.0s", 8.0);
  }
  s.runs = {TrialRun{.id = 0, .status = RunStatus::complete, .attempts = 1},
            TrialRun{.id = 1, .status = RunStatus::failed, .attempts = 1, .exit = timed_out(8.0)},
            TrialRun{.id = 2, .status = RunStatus::failed, .attempts = 1, .exit = timed_out(8.0)}};
  const std::string note = no_full_run_note(s);
  EXPECT_NE(note.find("no full-resolution trial (epochs 3) completed"), std::string::npos) << note;
  EXPECT_NE(note.find("2 full runs timed out at 8s (resolution.timeout of the full run); raise it"), std::string::npos)
      << note;
  // A cheap run that timed out is not the full run's limit.
  s.runs[1].exit->kind = adapters::ExitKind::exited;
  s.runs[1].exit->code = 1;
  s.runs[2].exit->kind = adapters::ExitKind::exited;
  s.runs[2].exit->code = 1;
  s.runs[0].exit = timed_out(5.0);
  EXPECT_EQ(no_full_run_note(s).find("timed out"), std::string::npos) << no_full_run_note(s);
}

// With time limits (1 s, 2 s, 3 s, default grace 10 s: 16, 17 and 18 s at worst) a budget of 40 is
// left unspent below a limit. With 26 spent, the 14 left is below every limit; with 23 spent, the 17
// left still fits a run at epochs 1 or 3 but not a full run, which the end held it for: the note
// names the full run's limit (it said nothing, while "the cost budget is spent: 2.001 of 20" was
// said of a tenth of a budget). With 22 spent, a full run fits and there is no note.
TEST(CampaignSpendNotes, BudgetLeftBelowATimeLimitNamesTheLimitItIsBelow) {
  const auto note_after = [](double spent) {
    CampaignState s =
        campaign_with("resolution: {param: epochs, levels: [1, 3, 9], timeout: [1s, 2s, 3s]}\nbudget: {cost: 40}\n");
    s.study.set_level_cost_limits(s.config.level_cost_limits());
    s.study.enqueue({{"x", 0.5}}, 0);
    EXPECT_TRUE(s.study.ask()) << s.study.stop_reason();
    s.study.tell(0, 1.0, spent);
    return unspent_under_limits_note(s);
  };
  const std::string below_all = note_after(26);
  EXPECT_NE(below_all.find("the 14s left is less than any level's time limit (the cheapest 16s with grace and 5 s)"),
            std::string::npos) << below_all;
  const std::string below_full = note_after(23);
  EXPECT_NE(below_full.find("the 17s left is less than a full run's time limit (18s with grace and 5 s)"),
            std::string::npos) << below_full;
  for (const std::string& note : {below_all, below_full})
    EXPECT_NE(note.find("shorter time limits (resolution.timeout) or a shorter executor.grace"), std::string::npos) << note;
  EXPECT_EQ(note_after(22), "");
  const std::string just_below = note_after(22.001);  // 17.999 left: not "the 18s left"
  EXPECT_NE(just_below.find("the 17.999s left is less than a full run's time limit (18s"), std::string::npos)
      << just_below;
}

}  // namespace
}  // namespace tune::tuner
