// Placeholder until the part lands; replaced by its sources.
namespace runner::profiler { int placeholder_profiler(); int placeholder_profiler() { return 0; } }
