# Real Triton imports triton.language (and more) after triton.runtime.
constexpr = int
