// Bodies of the checker's predicates and tables declared in rules.h.
#include "tests/peruse_checker/rules.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace sonde::peruse_checker::rules {

const char* const kNames[kNumKnown] = {
    "EVENT_INVALID",
    "REQ_ACTIVATE",
    "REQ_MATCH_UNEX",
    "REQ_INSERT_IN_POSTED_Q",
    "REQ_REMOVE_FROM_POSTED_Q",
    "REQ_XFER_BEGIN",
    "REQ_XFER_END",
    "REQ_COMPLETE",
    "REQ_NOTIFY",
    "MSG_ARRIVED",
    "MSG_INSERT_IN_UNEX_Q",
    "MSG_REMOVE_FROM_UNEX_Q",
    "MSG_MATCH_POSTED_REQ",
    "SEARCH_POSTED_Q_BEGIN",
    "SEARCH_POSTED_Q_END",
    "SEARCH_UNEX_Q_BEGIN",
    "SEARCH_UNEX_Q_END",
    "REQ_XFER_CONTINUE",
};

const char* const kStateNames[12] = {"-",         "active",   "posted",        "removed",     "matched", "xfer",
                                     "xfer-done", "complete", "posted-search", "unex-search", "arrived", "unexpected"};

const char* const kCondText[6] = {
    "", "receive", "send", "receive from MPI_PROC_NULL", "send, right after its ACTIVATE", "one-sided"};

uint8_t id_kind(uint64_t id) {
  switch (id & 7) {
    case 0: return kReq;
    case 1: return kSearch;
    case 2: return kTr;
    case 3: return kMsg;
    default: return 0;
  }
}

const char* id_kind_name(uint64_t id) {
  switch (id_kind(id)) {
    case kReq: return "request";
    case kSearch: return "search";
    case kTr: return "transient request";
    case kMsg: return "message";
    default: return "invalid id";
  }
}

bool is_request_event(int e) {
  return (e >= PERUSE_COMM_REQ_ACTIVATE && e <= PERUSE_COMM_REQ_NOTIFY) || e == PERUSE_COMM_REQ_XFER_CONTINUE;
}

bool is_message_event(int e) { return e >= PERUSE_COMM_MSG_ARRIVED && e <= PERUSE_COMM_MSG_MATCH_POSTED_REQ; }

uint8_t kinds_for(int e) {
  if (is_request_event(e)) return kReq | kTr;
  if (is_message_event(e)) return kMsg;
  return kSearch;
}

bool is_beginning(int e) {
  return e == PERUSE_COMM_REQ_ACTIVATE || e == PERUSE_COMM_MSG_ARRIVED || e == PERUSE_COMM_SEARCH_POSTED_Q_BEGIN ||
         e == PERUSE_COMM_SEARCH_UNEX_Q_BEGIN;
}

bool one_sided(int operation) { return operation == PERUSE_PUT || operation == PERUSE_GET || operation == PERUSE_ACC; }

const char* must_follow(int e, uint8_t kind, int operation) {
  if (kind == kTr && one_sided(operation)) {
    if (e == PERUSE_COMM_REQ_XFER_BEGIN) return "a one-sided operation's XFER_BEGIN follows its ACTIVATE at once (S10)";
    if (e == PERUSE_COMM_REQ_COMPLETE) return "a one-sided operation's COMPLETE follows its XFER_END at once (S10)";
    return nullptr;
  }
  if (kind == kTr && e != PERUSE_COMM_REQ_ACTIVATE)
    return "a transient request's events come as ACTIVATE XFER_BEGIN XFER_END COMPLETE NOTIFY, consecutively (S8)";
  switch (e) {
    case PERUSE_COMM_REQ_MATCH_UNEX:
      return "REQ_MATCH_UNEX(R) must follow MSG_REMOVE_FROM_UNEX_Q of R's search (S1) or R's ACTIVATE (S2)";
    case PERUSE_COMM_REQ_INSERT_IN_POSTED_Q:
      return "REQ_INSERT_IN_POSTED_Q(R) must follow the SEARCH_UNEX_Q_END of R's search (S1)";
    case PERUSE_COMM_MSG_MATCH_POSTED_REQ:
      return "MSG_MATCH_POSTED_REQ(M) must follow REQ_REMOVE_FROM_POSTED_Q after M's search (S4)";
    case PERUSE_COMM_MSG_INSERT_IN_UNEX_Q:
      return "MSG_INSERT_IN_UNEX_Q(M) must follow M's SEARCH_POSTED_Q_END (S4) or M's ARRIVED (S5)";
    case PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q:
      return "MSG_REMOVE_FROM_UNEX_Q must follow the SEARCH_UNEX_Q_END of a receive (S1) or probe (S6)";
    case PERUSE_COMM_SEARCH_POSTED_Q_BEGIN: return "SEARCH_POSTED_Q_BEGIN must follow MSG_ARRIVED (S4)";
    case PERUSE_COMM_SEARCH_POSTED_Q_END:
    case PERUSE_COMM_SEARCH_UNEX_Q_END: return "a search's END must immediately follow its BEGIN";
    default: return nullptr;
  }
}

bool accepts(int peer, int tag, int source, int msg_tag) {
  if (peer != MPI_ANY_SOURCE && peer != source) return false;
  if (tag == MPI_ANY_TAG) return msg_tag >= 0;
  return tag == msg_tag;
}

std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

std::string pattern(int peer, int tag) {
  std::string p = peer == MPI_ANY_SOURCE ? "ANY_SOURCE" : peer == MPI_PROC_NULL ? "PROC_NULL" : std::to_string(peer);
  return "(peer " + p + ", tag " + (tag == MPI_ANY_TAG ? std::string("ANY_TAG") : std::to_string(tag)) + ")";
}

std::string want_text(const Expect& x) {
  switch (x.what) {
    case Want::kNone: return "anything";
    case Want::kRecvStart:
      return format("SEARCH_UNEX_Q_BEGIN of receive 0x%" PRIx64 " (S1) or its REQ_MATCH_UNEX (S2)", x.r);
    case Want::kRecvProcNull: return format("REQ_COMPLETE(0x%" PRIx64 ") of the MPI_PROC_NULL receive (S3)", x.r);
    case Want::kSearchEnd: return format("%s(0x%" PRIx64 ")", kNames[x.next_event], x.s);
    case Want::kRecvOutcome: return format("REQ_INSERT_IN_POSTED_Q(0x%" PRIx64 ") or MSG_REMOVE_FROM_UNEX_Q (S1)", x.r);
    case Want::kMatchUnex: return format("REQ_MATCH_UNEX(0x%" PRIx64 ") for message 0x%" PRIx64 " (S1)", x.r, x.m);
    case Want::kArrival:
      return format("SEARCH_POSTED_Q_BEGIN for message 0x%" PRIx64 " (S4) or its MSG_INSERT_IN_UNEX_Q (S5)", x.m);
    case Want::kArrivalOutcome:
      return format("MSG_INSERT_IN_UNEX_Q(0x%" PRIx64 ") or REQ_REMOVE_FROM_POSTED_Q (S4)", x.m);
    case Want::kMatchPosted:
      return format("MSG_MATCH_POSTED_REQ(0x%" PRIx64 ") for receive 0x%" PRIx64 " (S4)", x.m, x.r);
    case Want::kCancel: return format("REQ_COMPLETE(0x%" PRIx64 ") of the cancelled receive (S7)", x.r);
    case Want::kTransient: return format("%s(0x%" PRIx64 ") (S8)", kNames[x.next_event], x.r);
    case Want::kOneSided: return format("%s(0x%" PRIx64 ") (S10)", kNames[x.next_event], x.r);
    case Want::kProbeTail: return "anything (after a probe)";
  }
  return "?";
}

}  // namespace sonde::peruse_checker::rules
