// Recorder (checker.h): the PERUSE callback that appends each event to a
// preallocated buffer, registration on communicators, and the end-of-run check.
#include "tests/peruse_checker/checker.h"

#include <cstdio>

#include "tests/peruse_checker/rules.h"

namespace sonde::peruse_checker {

using rules::kNumKnown;

Recorder::Recorder(size_t capacity) : buf_(new Event[capacity]), capacity_(capacity) {
  for (int e = 0; e < 64; ++e) slots_[e] = Slot{this, e};
}

Recorder::~Recorder() {
  if (!handles_.empty()) stop();
}

int Recorder::on_event(peruse_event_h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  const Slot* slot = static_cast<const Slot*>(param);
  Recorder* self = slot->self;
  size_t i = self->next_.fetch_add(1, std::memory_order_relaxed);
  if (i < self->capacity_) {
    self->buf_[i] = Event{MPI_Wtime(),    static_cast<uint64_t>(id),
                          slot->event,    spec->comm,
                          spec->buf,      spec->count,
                          spec->datatype, spec->peer,
                          spec->tag,      spec->operation};
  }
  return MPI_SUCCESS;
}

int Recorder::watch(MPI_Comm comm, bool propagate) {
  int rc = PERUSE_Init();
  if (rc != PERUSE_SUCCESS) return rc;
  int n = 0;
  char** names = nullptr;
  int* events = nullptr;
  rc = PERUSE_Query_supported_events(&n, &names, &events);
  if (rc != PERUSE_SUCCESS) return rc;
  size_t first = handles_.size();
  for (int k = 0; k < n; ++k) {
    int event = events[k];
    if (event <= 0 || event >= 64) return PERUSE_ERR_EVENT;
    peruse_event_h h = PERUSE_EVENT_HANDLE_NULL;
    rc = PERUSE_Event_comm_register(event, comm, &Recorder::on_event, &slots_[event], &h);
    if (rc != PERUSE_SUCCESS) return rc;
    handles_.push_back(Handle{comm, h});
    if (propagate && (rc = PERUSE_Event_propagate(h, 1)) != PERUSE_SUCCESS) return rc;
  }
  // Everything at once: no traffic can run between these calls.
  for (size_t k = first; k < handles_.size(); ++k)
    if ((rc = PERUSE_Event_activate(handles_[k].h)) != PERUSE_SUCCESS) return rc;
  return PERUSE_SUCCESS;
}

int Recorder::unwatch(MPI_Comm comm) {
  int result = PERUSE_SUCCESS;
  for (size_t k = 0; k < handles_.size();) {
    if (handles_[k].comm != comm) {
      ++k;
      continue;
    }
    PERUSE_Event_deactivate(handles_[k].h);
    int rc = PERUSE_Event_release(&handles_[k].h);
    if (rc != PERUSE_SUCCESS && result == PERUSE_SUCCESS) result = rc;
    handles_.erase(handles_.begin() + long(k));
  }
  return result;
}

int Recorder::stop() {
  int result = PERUSE_SUCCESS;
  for (Handle& h : handles_) PERUSE_Event_deactivate(h.h);
  for (Handle& h : handles_) {
    int rc = PERUSE_Event_release(&h.h);
    // A handle of a freed communicator is released all the same (and says so).
    if (rc != PERUSE_SUCCESS && rc != PERUSE_ERR_MPI_OBJECT && result == PERUSE_SUCCESS) result = rc;
  }
  handles_.clear();
  return result;
}

size_t Recorder::size() const {
  size_t n = next_.load(std::memory_order_acquire);
  return n < capacity_ ? n : capacity_;
}

size_t Recorder::lost() const {
  size_t n = next_.load(std::memory_order_acquire);
  return n > capacity_ ? n - capacity_ : 0;
}

std::vector<size_t> Recorder::counts() const {
  std::vector<size_t> c(kNumKnown, 0);
  for (size_t i = 0, n = size(); i < n; ++i)
    if (buf_[i].event > 0 && buf_[i].event < kNumKnown) ++c[size_t(buf_[i].event)];
  return c;
}

int Recorder::check(FILE* out, int rank) const {
  std::vector<Violation> v = verify();
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "[rank %d] ", rank);
  print(out, prefix, v);
  return int(v.size());
}

long Recorder::finish(MPI_Comm quiet, int rank, long failures) {
  if (stop() != PERUSE_SUCCESS) ++failures;
  long mine = check(stderr, rank) + failures, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, quiet);
  return all;
}

}  // namespace sonde::peruse_checker
