// backend-no_entry.so: a shared object without the descriptor symbol (e.g. a stray
// library in the plugin directory).
#include <string>

extern "C" __attribute__((visibility("default"))) int ab_test_not_a_plugin(int x) {
  return static_cast<int>(std::to_string(x).size());
}
