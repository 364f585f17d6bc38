#pragma once
// Whether the GP's hand-written AVX loops may run (tracked targets, tracked rows, appended Cholesky
// rows). Each replays, lane by lane, the SSE2 operations of the path it stands for, so both give
// the same bits; the SSE2 path runs on processors without AVX, and tests run it here too.

namespace tune {

// True when the processor has AVX and the AVX loops are not switched off.
bool avx_loops_enabled();

// Switches the AVX loops off (false) or back on, for the whole process: tests compare the SSE2
// paths with the references the AVX paths are tested against. Not for use while other threads
// compute.
void set_avx_loops_enabled(bool enabled);

}  // namespace tune
