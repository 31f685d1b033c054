// The event descriptors Sonde supports and their names (the constant names,
// as PERUSE_Query_event expects). The arrays are the library's own: the same
// pointers on every call, valid for the life of the process.
#pragma once

namespace sonde::peruse {

// Name of any event id, or "PERUSE_EVENT_INVALID".
const char* event_name(int event);
// Supported (compiled in) events: every one, or none in the production
// library built with --define=peruse=off.
bool event_supported(int event);
const char* event_name_of(int event);  // supported events only
int event_by_name(const char* name);   // PERUSE_EVENT_INVALID if unknown
int supported_count();
char** supported_names();
int* supported_ids();

}  // namespace sonde::peruse
