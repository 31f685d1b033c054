// Moving data between the buffers of a collective: the user's and scratch
// (declarations and contracts in coll_internal.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "coll/coll_internal.h"
#include "datatype/datatype.h"

namespace sonde::engine::coll::detail {

// Copies scount elements of stype at src into rcount elements of rtype at
// dst (the type signatures agree, as MPI requires). More data than room is
// MPI_ERR_TRUNCATE, like a receive.
int copy(const void* src, int64_t scount, const Datatype* stype, void* dst, int64_t rcount, const Datatype* rtype) {
  const int64_t n = scount * stype->size;
  if (n > rcount * rtype->size) return MPI_ERR_TRUNCATE;
  // The same bytes through the same layout: nothing to move. (Equal pointers
  // alone prove nothing: MPI_BOTTOM with absolute-address datatypes.)
  if (n == 0 || (src == dst && stype == rtype)) return MPI_SUCCESS;
  if (stype->contiguous && rtype->contiguous) {
    std::memmove(contiguous_start(*rtype, dst), contiguous_start(*stype, src), static_cast<size_t>(n));
  } else if (stype->contiguous) {
    unpack(*rtype, dst, rcount, 0, contiguous_start(*stype, src), static_cast<uint64_t>(n));
  } else if (rtype->contiguous) {
    pack(*stype, src, scount, 0, contiguous_start(*rtype, dst), static_cast<uint64_t>(n));
  } else {
    constexpr int64_t kPiece = 64 * 1024;
    ScratchBytes piece(static_cast<size_t>(std::min(n, kPiece)));
    for (int64_t off = 0; off < n; off += kPiece) {
      const uint64_t len = static_cast<uint64_t>(std::min(kPiece, n - off));
      pack(*stype, src, scount, static_cast<uint64_t>(off), piece.data(), len);
      unpack(*rtype, dst, rcount, static_cast<uint64_t>(off), piece.data(), len);
    }
  }
  return MPI_SUCCESS;
}

// Packed bytes of (buf, count, type) into out / from in, whole.
void pack_all(const void* buf, int64_t count, const Datatype* type, uint8_t* out) {
  const int64_t n = count * type->size;
  if (n > 0) pack(*type, buf, count, 0, out, static_cast<uint64_t>(n));
}
void unpack_all(const uint8_t* in, void* buf, int64_t count, const Datatype* type) {
  const int64_t n = count * type->size;
  if (n > 0) unpack(*type, buf, count, 0, in, static_cast<uint64_t>(n));
}

}  // namespace sonde::engine::coll::detail
