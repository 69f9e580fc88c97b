// GoogleMock fake of the Harness interface.
#pragma once

#include <gmock/gmock.h>

#include "agent_boundary/harness.hpp"

namespace agent_boundary::testing {

class MockHarness : public Harness {
 public:
  MOCK_METHOD(Event, event_kind, (const std::string& event_name), (const, override));
  MOCK_METHOD(ToolCall, parse_tool_call, (const std::string& payload), (const, override));
  MOCK_METHOD(std::string, encode_decision,
              (const std::string& payload, const Decision& decision, int& exit_code),
              (const, override));
  MOCK_METHOD(SessionStartEvent, parse_session_start, (const std::string& payload),
              (const, override));
  MOCK_METHOD(std::string, finish_session_start, (const SessionStartReport& report),
              (const, override));
  MOCK_METHOD(std::vector<std::string>, protected_paths, (), (const, override));
  MOCK_METHOD(std::string, ambient_session_id, (), (const, override));
  MOCK_METHOD(std::string, statusline,
              (const std::string& payload, SessionStatus (*lookup)(const std::string&)),
              (const, override));
};

}  // namespace agent_boundary::testing
