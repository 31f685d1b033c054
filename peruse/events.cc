#include "peruse/events.h"

#include <cstring>

#include "peruse/dispatch.h"

namespace sonde::peruse {

namespace {

// Indexed by event id.
const char* const kNames[kNumEvents] = {
    "PERUSE_EVENT_INVALID",
    "PERUSE_COMM_REQ_ACTIVATE",
    "PERUSE_COMM_REQ_MATCH_UNEX",
    "PERUSE_COMM_REQ_INSERT_IN_POSTED_Q",
    "PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q",
    "PERUSE_COMM_REQ_XFER_BEGIN",
    "PERUSE_COMM_REQ_XFER_END",
    "PERUSE_COMM_REQ_COMPLETE",
    "PERUSE_COMM_REQ_NOTIFY",
    "PERUSE_COMM_MSG_ARRIVED",
    "PERUSE_COMM_MSG_INSERT_IN_UNEX_Q",
    "PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q",
    "PERUSE_COMM_MSG_MATCH_POSTED_REQ",
    "PERUSE_COMM_SEARCH_POSTED_Q_BEGIN",
    "PERUSE_COMM_SEARCH_POSTED_Q_END",
    "PERUSE_COMM_SEARCH_UNEX_Q_BEGIN",
    "PERUSE_COMM_SEARCH_UNEX_Q_END",
    "PERUSE_COMM_REQ_XFER_CONTINUE",
};

// Other spellings the specification uses for the same events.
struct Alias {
  const char* name;
  int event;
};
const Alias kAliases[] = {
    {"PERUSE_COMM_SEARCH_UNEX_QUEUE_BEGIN", PERUSE_COMM_SEARCH_UNEX_Q_BEGIN},
    {"PERUSE_COMM_SEARCH_UNEX_QUEUE_END", PERUSE_COMM_SEARCH_UNEX_Q_END},
};

#ifndef SONDE_PERUSE_OFF
constexpr int kSupported = kNumEvents - 1;
#else
constexpr int kSupported = 0;
#endif

char* g_names[kNumEvents - 1] = {};
int g_ids[kNumEvents - 1] = {};

struct Tables {
  Tables() {
    for (int e = 1; e < kNumEvents; ++e) {
      g_names[e - 1] = const_cast<char*>(kNames[e]);
      g_ids[e - 1] = e;
    }
  }
} g_tables;

}  // namespace

const char* event_name(int event) {
  return event > 0 && event < kNumEvents ? kNames[event] : kNames[PERUSE_EVENT_INVALID];
}

bool event_supported(int event) { return kSupported > 0 && event > 0 && event < kNumEvents; }

const char* event_name_of(int event) { return event_supported(event) ? kNames[event] : nullptr; }

int event_by_name(const char* name) {
  if (!kSupported) return PERUSE_EVENT_INVALID;
  for (int e = 1; e < kNumEvents; ++e)
    if (std::strcmp(name, kNames[e]) == 0) return e;
  for (const Alias& a : kAliases)
    if (std::strcmp(name, a.name) == 0) return a.event;
  return PERUSE_EVENT_INVALID;
}

int supported_count() { return kSupported; }
char** supported_names() { return g_names; }
int* supported_ids() { return g_ids; }

}  // namespace sonde::peruse
