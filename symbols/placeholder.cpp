// Placeholder until the part lands; replaced by its sources.
namespace runner::symbols { int placeholder_symbols(); int placeholder_symbols() { return 0; } }
