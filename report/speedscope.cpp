// `runner report --format speedscope`: <folder>/report/profile.speedscope.json
// in speedscope's file format
// (https://www.speedscope.app/file-format-schema.json): one "sampled" profile
// per benchmark, whose samples are its folded stacks (frame indexes, root
// first) weighted by their counts, over one frame table shared by every
// benchmark.
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "config.h"
#include "format/format.hpp"
#include "report/output.hpp"

namespace runner::report {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kSchema =
    "https://www.speedscope.app/file-format-schema.json";

class SpeedscopeOutput : public Output {
 public:
  explicit SpeedscopeOutput(const ReportDir& dir) : dir_(dir) {}

  void add_benchmark(const BenchmarkProfile& b) override {
    Json samples = Json::array(), weights = Json::array();
    uint64_t total = 0;
    for (const FoldedStack& stack : b.stacks) {
      Json frames = Json::array();
      for (const std::string& name : stack.frames)
        frames.push_back(frame_index(name));
      samples.push_back(std::move(frames));
      weights.push_back(stack.count);
      total += stack.count;
    }
    Json profile = Json::object();
    profile["type"] = "sampled";
    profile["name"] = b.name;
    profile["unit"] = "none";  // weights are sample counts
    profile["startValue"] = 0;
    profile["endValue"] = total;
    profile["samples"] = std::move(samples);
    profile["weights"] = std::move(weights);
    profiles_.push_back(std::move(profile));
  }

  void finish(const ReportTotals& totals,
              std::vector<std::string>& errors) override {
    if (!dir_.created) return;
    Json file = Json::object();
    file["$schema"] = kSchema;
    file["name"] = folder_name(totals.folder);
    file["exporter"] = std::string("runner ") + RUNNER_VERSION;
    file["activeProfileIndex"] = 0;
    file["shared"] = {{"frames", std::move(frames_)}};
    file["profiles"] = std::move(profiles_);
    // Names come from the profile folder and may not be valid UTF-8.
    write_output_file(
        dir_.path + "/" + std::string(format::ProfileLayout::kReportSpeedscope),
        file.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n",
        errors);
  }

  std::string files() const override {
    return std::string(format::ProfileLayout::kReportSpeedscope);
  }

 private:
  // The frame's index in the shared table, added on first use.
  size_t frame_index(const std::string& name) {
    auto [it, added] = index_.emplace(name, frames_.size());
    if (added) frames_.push_back({{"name", name}});
    return it->second;
  }

  static std::string folder_name(const std::string& folder) {
    const std::filesystem::path path =
        std::filesystem::path(folder).lexically_normal();
    std::string name = path.filename().string();
    if (name.empty()) name = path.parent_path().filename().string();
    return name.empty() ? folder : name;
  }

  ReportDir dir_;
  std::map<std::string, size_t> index_;
  Json frames_ = Json::array();
  Json profiles_ = Json::array();
};

}  // namespace

std::unique_ptr<Output> make_speedscope_output(const ReportDir& dir) {
  return std::make_unique<SpeedscopeOutput>(dir);
}

}  // namespace runner::report
