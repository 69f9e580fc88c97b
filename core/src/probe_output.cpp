#include "agent_boundary/probe.hpp"

namespace agent_boundary {

ProbeResult parse_probe_output(const ProcessResult& r, int timeout_ms) {
  ProbeResult out;
  if (r.timed_out) {
    out.verdict = ProbeResult::Verdict::denied;
    out.detail = "probe timed out after " + std::to_string(timeout_ms) + " ms";
    return out;
  }
  const std::string line = first_line(r.out);
  if (r.exit_code != 0 || r.signal != 0 || line.empty()) {
    out.verdict = ProbeResult::Verdict::inconclusive;
    std::string why = first_line(r.err);
    if (why.empty())
      why = "probe exited " + std::to_string(r.signal ? 128 + r.signal : r.exit_code);
    out.detail = "probe inconclusive: " + why;
    return out;
  }
  const auto bar = line.find('|');
  const std::string verdict = line.substr(0, bar);
  out.detail = bar == std::string::npos ? "" : line.substr(bar + 1);
  if (verdict == "allowed")
    out.verdict = ProbeResult::Verdict::allowed;
  else if (verdict == "denied")
    out.verdict = ProbeResult::Verdict::denied;
  else {
    out.verdict = ProbeResult::Verdict::inconclusive;
    out.detail = "probe inconclusive: " + line;
  }
  return out;
}

}  // namespace agent_boundary
