// Symbol visibility for core's public interface. Everything is built with
// -fvisibility=hidden; only what is marked AB_API is exported, so every plugin binds to
// the one copy of each interface's vtable and type_info that lives in core.
#pragma once

#define AB_API __attribute__((visibility("default")))
