// Placeholder until the part lands; replaced by its sources.
namespace runner::report { int placeholder_report(); int placeholder_report() { return 0; } }
