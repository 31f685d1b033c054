// The mpiexec <-> sonde-hostd control protocol (tools/mpiexec/control.h):
// frames as Channel::next() cuts them from a byte stream, and each one's
// payload read as its receiver reads it (JobMessage::decode for kJob,
// SpawnRequest, SpawnJobMessage, GroupFence, NameRequest and NameReply's
// decode for theirs, the
// Reader's fields for the others). Malformed input must end in
// ProtocolError, never a crash, an out-of-bounds read or a runaway
// allocation.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tools/mpiexec/control.h"
#include "tools/mpiexec/name_table.h"

using namespace sonde::mpiexec;

namespace {

void read_payload(Msg type, const std::string& payload) {
  Reader in(payload);
  switch (type) {
    case Msg::kJob: JobMessage::decode(payload); break;
    case Msg::kHello: in.str(), in.i32(), in.str(), in.i32(), in.str(); break;
    case Msg::kOutput: in.i32(), in.u8(), in.str(); break;
    case Msg::kExited: in.i32(), in.i32(), in.i32(), in.u8(), in.u8(); break;
    case Msg::kAbort:
    case Msg::kFailure: in.i32(), in.i32(), in.str(); break;
    case Msg::kFence:
    case Msg::kFenceDone: in.u32(), in.str(); break;
    case Msg::kSignal: in.i32(); break;
    case Msg::kModexRequest: in.u32(), in.i32(); break;
    case Msg::kModexReply: in.u32(), in.i32(), in.str(); break;
    case Msg::kStdin: in.str(); break;
    case Msg::kSpawnRequest: SpawnRequest::decode(payload); break;
    case Msg::kSpawnJob: SpawnJobMessage::decode(payload); break;
    case Msg::kSpawnStarted:
    case Msg::kSpawnReply:
    case Msg::kGroupFenceDone: in.u32(), in.i32(), in.str(); break;
    case Msg::kGroupFence: GroupFence::decode(payload); break;
    case Msg::kNameRequest: NameRequest::decode(payload); break;
    case Msg::kNameReply: NameReply::decode(payload); break;
    default: in.strings(); break;  // unknown types: any field layout
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view avail(reinterpret_cast<const char*>(data), size);
  // A small frame limit, so that lengths near it are reachable.
  constexpr uint32_t kLimit = 1u << 16;
  try {
    for (;;) {
      size_t used = 0;
      auto m = decode_frame(avail, kLimit, &used);
      if (!m) break;
      avail.remove_prefix(used);
      try {
        read_payload(m->first, m->second);
      } catch (const ProtocolError&) {
      }
    }
  } catch (const ProtocolError&) {
  }
  return 0;
}
