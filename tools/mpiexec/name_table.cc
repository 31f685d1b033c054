#include "tools/mpiexec/name_table.h"

namespace sonde::mpiexec {
namespace {

// PMIx's bound on a key (PMIX_MAX_KEYLEN).
constexpr size_t kMaxKey = 511;

}  // namespace

Writer NameRequest::encode() const {
  Writer w;
  w.u32(id).u8(static_cast<uint8_t>(op)).str(nspace).u32(rank).u8(wait ? 1 : 0).strings(keys).strings(values);
  return w;
}

NameRequest NameRequest::decode(std::string_view payload) {
  Reader r(payload);
  NameRequest q;
  q.id = r.u32();
  const uint8_t op = r.u8();
  if (op < static_cast<uint8_t>(Op::kPublish) || op > static_cast<uint8_t>(Op::kUnpublish)) {
    throw ProtocolError("unknown name service operation");
  }
  q.op = static_cast<Op>(op);
  q.nspace = r.str();
  q.rank = r.u32();
  q.wait = r.u8() != 0;
  q.keys = r.strings();
  q.values = r.strings();
  if (q.nspace.empty() || q.nspace.size() > kMaxNspace || (q.keys.empty() && q.op != Op::kUnpublish)) {
    throw ProtocolError("inconsistent name service request");
  }
  for (const auto& k : q.keys) {
    if (k.empty() || k.size() > kMaxKey) throw ProtocolError("name service key of a bad length");
  }
  if (q.values.size() != (q.op == Op::kPublish ? q.keys.size() : 0)) {
    throw ProtocolError("name service values do not match its keys");
  }
  return q;
}

Writer NameReply::encode() const {
  Writer w;
  w.u32(id).u8(static_cast<uint8_t>(status)).u32(static_cast<uint32_t>(found.size()));
  for (const auto& e : found) w.str(e.key).str(e.nspace).u32(e.rank).str(e.value);
  return w;
}

NameReply NameReply::decode(std::string_view payload) {
  Reader r(payload);
  NameReply a;
  a.id = r.u32();
  const uint8_t status = r.u8();
  if (status > static_cast<uint8_t>(NameStatus::kBadRequest)) throw ProtocolError("unknown name service status");
  a.status = static_cast<NameStatus>(status);
  const uint32_t n = r.u32();
  // Each entry takes at least 16 bytes.
  if (n > payload.size() / 16) throw ProtocolError("inconsistent name service reply");
  for (uint32_t i = 0; i < n; ++i) {
    NameEntry e;
    e.key = r.str();
    e.nspace = r.str();
    e.rank = r.u32();
    e.value = r.str();
    a.found.push_back(std::move(e));
  }
  return a;
}

bool NameTable::all_present(const std::vector<std::string>& keys) const {
  for (const auto& k : keys)
    if (table_.find(k) == table_.end()) return false;
  return true;
}

NameStatus NameTable::publish(const NameRequest& r) {
  for (size_t i = 0; i < r.keys.size(); ++i) {
    if (table_.count(r.keys[i]) != 0) return NameStatus::kDuplicate;
    for (size_t j = 0; j < i; ++j)
      if (r.keys[j] == r.keys[i]) return NameStatus::kDuplicate;
  }
  for (size_t i = 0; i < r.keys.size(); ++i) table_[r.keys[i]] = NameEntry{r.keys[i], r.nspace, r.rank, r.values[i]};
  return NameStatus::kOk;
}

NameStatus NameTable::unpublish(const NameRequest& r) {
  if (r.keys.empty()) {
    std::erase_if(table_, [&](const auto& e) { return e.second.nspace == r.nspace && e.second.rank == r.rank; });
    return NameStatus::kOk;
  }
  NameStatus status = NameStatus::kOk;
  for (const auto& k : r.keys) {
    auto it = table_.find(k);
    if (it == table_.end()) {
      status = NameStatus::kNotFound;
    } else if (it->second.nspace != r.nspace) {
      status = NameStatus::kNoPermission;
    } else {
      table_.erase(it);
    }
  }
  return status;
}

NameReply NameTable::answer(const NameRequest& r) const {
  NameReply a;
  a.id = r.id;
  for (const auto& k : r.keys) {
    auto it = table_.find(k);
    if (it != table_.end()) a.found.push_back(it->second);
  }
  a.status = a.found.size() == r.keys.size() ? NameStatus::kOk : NameStatus::kNotFound;
  return a;
}

void NameTable::serve(const NameRequest& request, Done done) {
  NameReply reply;
  reply.id = request.id;
  switch (request.op) {
    case NameRequest::Op::kPublish:
      if (request.keys.empty() || request.values.size() != request.keys.size()) {
        reply.status = NameStatus::kBadRequest;
        break;
      }
      reply.status = publish(request);
      if (reply.status == NameStatus::kOk) {
        // Answer the lookups this completes, oldest first; a callback may
        // serve another request, so each waiter leaves the list first.
        for (size_t i = 0; i < waiters_.size();) {
          if (!all_present(waiters_[i].request.keys)) {
            ++i;
            continue;
          }
          Waiter w = std::move(waiters_[i]);
          waiters_.erase(waiters_.begin() + static_cast<long>(i));
          w.done(answer(w.request));
        }
      }
      break;
    case NameRequest::Op::kLookup:
      if (request.keys.empty()) {
        reply.status = NameStatus::kBadRequest;
        break;
      }
      if (request.wait && !all_present(request.keys)) {
        waiters_.push_back(Waiter{request, std::move(done)});
        return;
      }
      return done(answer(request));
    case NameRequest::Op::kUnpublish: reply.status = unpublish(request); break;
  }
  done(std::move(reply));
}

}  // namespace sonde::mpiexec
