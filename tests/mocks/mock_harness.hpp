// GoogleMock fake of the Harness interface.
#pragma once

#include <gmock/gmock.h>

#include "agent_boundary/harness.hpp"

namespace agent_boundary::testing {

class MockHarness : public Harness {
 public:
  MOCK_METHOD(ToolCall, parse_tool_call, (const std::string& payload), (const, override));
  MOCK_METHOD(std::string, encode_decision,
              (const std::string& payload, const Decision& decision, int& exit_code),
              (const, override));
};

}  // namespace agent_boundary::testing
