// GoogleMock fake of the Backend interface, for core logic tested without any plugin.
#pragma once

#include <gmock/gmock.h>

#include "agent_boundary/backend.hpp"

namespace agent_boundary::testing {

class MockBackend : public Backend {
 public:
  MOCK_METHOD(BackendExecutable, locate, (const std::string& hint), (const, override));
  MOCK_METHOD(void, preflight, (const BackendExecutable& exe), (const, override));
  MOCK_METHOD(std::vector<DenyState>, deny_state,
              (const ResolvedPolicy& policy, const BackendExecutable& exe), (const, override));
  MOCK_METHOD(bool, holds_paths, (), (const, override));
  MOCK_METHOD(std::vector<RenderedFile>, render,
              (const ResolvedPolicy& policy, const SessionView& session), (const, override));
  MOCK_METHOD(std::vector<std::string>, wrap, (const WrapRequest& request), (const, override));
  MOCK_METHOD(ProbeResult, probe, (const ProbeRequest& request), (const, override));
  MOCK_METHOD(void, start, (const SessionView& session), (const, override));
  MOCK_METHOD(void, stop, (const SessionView& session), (const, override));
};

}  // namespace agent_boundary::testing
