#include "compare/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace agent_boundary::compare {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

double round1(double v) { return std::round(v * 10) / 10; }

bool timing_failed(const BackendResult& b) { return b.timing && !b.timing->error.empty(); }

std::string column_title(const BackendResult& b) {
  return b.version.empty() ? b.name : b.name + " " + b.version;
}

// Aligned rows; the last column is not padded.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i)
      line += i + 1 == r.size() ? r[i] : pad(r[i], width[i] + 2);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace

Tally tally(const Report& report) {
  Tally t;
  for (const auto& b : report.backends) {
    if (!b.error.empty() || timing_failed(b)) ++t.backend_errors;
    for (const auto& c : b.cells) {
      if (c.outcome == Outcome::ok) ++t.ok;
      if (c.outcome == Outcome::declared) ++t.declared;
      if (c.outcome == Outcome::fail) ++t.fail;
    }
  }
  return t;
}

bool passed(const Report& report) {
  const Tally t = tally(report);
  return !report.backends.empty() && t.fail == 0 && t.backend_errors == 0;
}

std::string render_text(const Report& report) {
  const auto& scenarios = corpus();
  std::string out;
  out += "agent-boundary compare: " + std::to_string(scenarios.size()) + " scenarios, " +
         std::to_string(report.backends.size()) + " backend" +
         (report.backends.size() == 1 ? "" : "s") + "\n";
  out +=
      "(ok: as the profile intends; declared: differs where the backend's deny-state says "
      "so; FAIL: differs)\n\n";

  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"scenario", "kind", "intent"};
  for (const auto& b : report.backends) head.push_back(column_title(b));
  rows.push_back(head);
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    std::vector<std::string> row = {scenarios[i].id, to_string(scenarios[i].kind),
                                    to_string(scenarios[i].intent)};
    for (const auto& b : report.backends)
      row.push_back(i < b.cells.size() ? to_string(b.cells[i].outcome) : "-");
    rows.push_back(row);
  }
  out += table(rows);

  std::string problems;
  for (const auto& b : report.backends) {
    if (!b.error.empty()) problems += "  " + b.name + ": " + b.error + "\n";
    for (std::size_t i = 0; i < b.cells.size() && i < scenarios.size(); ++i)
      if (b.cells[i].outcome != Outcome::ok)
        problems += "  " + b.name + " " + scenarios[i].id + ": " + to_string(b.cells[i].outcome) +
                    ": " + b.cells[i].detail + "\n";
    if (timing_failed(b)) problems += "  " + b.name + " timing: " + b.timing->error + "\n";
  }
  if (!problems.empty()) out += "\nnot ok:\n" + problems;

  std::vector<std::vector<std::string>> times;
  for (const auto& b : report.backends) {
    if (!b.timing || !b.timing->error.empty()) continue;
    const Timing& t = *b.timing;
    times.push_back({column_title(b), ms(t.bare_true_ms), ms(t.wrapped_true_ms),
                     ms(t.wrapped_true_ms - t.bare_true_ms), ms(t.probe_ms)});
  }
  if (!times.empty()) {
    times.insert(times.begin(),
                 {"backend", "bash -c true", "wrapped", "overhead", "probe (gate Read)"});
    out += "\nmedian of " + std::to_string(report.runs) + " runs, ms:\n" + table(times);
  }

  std::string warnings;
  for (const auto& b : report.backends)
    for (const auto& w : b.warnings) warnings += "  " + b.name + ": " + w + "\n";
  if (!warnings.empty()) out += "\nwarnings:\n" + warnings;

  const Tally t = tally(report);
  out += std::string("\nresult: ") + (passed(report) ? "PASS" : "FAIL") + " (" +
         std::to_string(t.ok) + " ok, " + std::to_string(t.declared) + " declared, " +
         std::to_string(t.fail) + " FAIL";
  if (t.backend_errors) out += ", " + std::to_string(t.backend_errors) + " backend errors";
  if (report.backends.empty()) out += "; no backend ran";
  out += ")\n";
  return out;
}

std::string render_json(const Report& report) {
  const auto& scenarios = corpus();
  ordered_json j;
  j["format"] = 1;
  j["passed"] = passed(report);
  const Tally t = tally(report);
  j["tally"] = {{"ok", t.ok},
                {"declared", t.declared},
                {"fail", t.fail},
                {"backend_errors", t.backend_errors}};
  j["runs"] = report.runs;
  j["scenarios"] = ordered_json::array();
  for (const auto& s : scenarios)
    j["scenarios"].push_back({{"id", s.id},
                              {"kind", to_string(s.kind)},
                              {"intent", to_string(s.intent)},
                              {"summary", s.summary}});
  j["backends"] = ordered_json::array();
  for (const auto& b : report.backends) {
    ordered_json jb;
    jb["name"] = b.name;
    jb["version"] = b.version;
    jb["error"] = b.error.empty() ? ordered_json() : ordered_json(b.error);
    jb["warnings"] = b.warnings;
    jb["results"] = ordered_json::object();
    for (std::size_t i = 0; i < b.cells.size() && i < scenarios.size(); ++i)
      jb["results"][scenarios[i].id] = {{"observed", to_string(b.cells[i].observed)},
                                        {"outcome", to_string(b.cells[i].outcome)},
                                        {"detail", b.cells[i].detail}};
    if (b.timing) {
      const Timing& tm = *b.timing;
      if (tm.error.empty())
        jb["timing"] = {{"runs", tm.runs},
                        {"bare_true_ms", round1(tm.bare_true_ms)},
                        {"wrapped_true_ms", round1(tm.wrapped_true_ms)},
                        {"overhead_ms", round1(tm.wrapped_true_ms - tm.bare_true_ms)},
                        {"probe_ms", round1(tm.probe_ms)}};
      else
        jb["timing"] = {{"runs", tm.runs}, {"error", tm.error}};
    } else {
      jb["timing"] = nullptr;
    }
    j["backends"].push_back(jb);
  }
  return j.dump(2) + "\n";
}

}  // namespace agent_boundary::compare
