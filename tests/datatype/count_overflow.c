/* Byte counts that do not fit in MPI_Count are refused, never wrapped:
 *
 * - 2^30 elements of a 2^34-byte type (2^64 bytes) in a send, a receive, a
 *   broadcast, Pack/Pack_size/Unpack and MPI_Status_set_elements_x: each
 *   MPI_ERR_COUNT, and nothing leaves (the receive that follows finds no
 *   message);
 * - a type of 2^63 bytes or more (contiguous of huge types, a subarray of
 *   2^93 bytes) can be built, committed, queried and freed: MPI_Type_size,
 *   _size_x and _size_c answer MPI_UNDEFINED (never a negative number), as do
 *   the extent queries where the bounds do not fit; moving even one element
 *   is MPI_ERR_COUNT;
 * - a vector whose extent exceeds 2^63 but whose data is small reports its
 *   size and MPI_UNDEFINED bounds;
 * - the _c / _x element and count queries on such types answer
 *   MPI_UNDEFINED or 0, never a wrapped value. One rank.
 */
#include "tests/integration/itest.h"

static const MPI_Count kUndef = MPI_UNDEFINED;

static void check_sizes_undefined(MPI_Datatype t, const char* what) {
  int s = 0;
  MPI_Count sx = 0, lb = 0, ext = 0;
  CHECK_OK(MPI_Type_size(t, &s));
  CHECK(s == MPI_UNDEFINED, "%s: MPI_Type_size %d, want MPI_UNDEFINED", what, s);
  CHECK_OK(MPI_Type_size_x(t, &sx));
  CHECK(sx == kUndef, "%s: MPI_Type_size_x %lld, want MPI_UNDEFINED", what, (long long)sx);
  CHECK_OK(MPI_Type_size_c(t, &sx));
  CHECK(sx == kUndef, "%s: MPI_Type_size_c %lld, want MPI_UNDEFINED", what, (long long)sx);
  CHECK_OK(MPI_Type_get_extent_x(t, &lb, &ext));
  CHECK(lb == kUndef && ext == kUndef, "%s: extent_x (%lld, %lld), want MPI_UNDEFINED", what, (long long)lb,
        (long long)ext);
  CHECK_OK(MPI_Type_get_extent_c(t, &lb, &ext));
  CHECK(lb == kUndef && ext == kUndef, "%s: extent_c (%lld, %lld)", what, (long long)lb, (long long)ext);
  CHECK_OK(MPI_Type_get_true_extent_x(t, &lb, &ext));
  CHECK(lb == kUndef && ext == kUndef, "%s: true_extent_x (%lld, %lld)", what, (long long)lb, (long long)ext);
  CHECK_OK(MPI_Type_get_true_extent_c(t, &lb, &ext));
  CHECK(lb == kUndef && ext == kUndef, "%s: true_extent_c (%lld, %lld)", what, (long long)lb, (long long)ext);
  MPI_Aint alb = 0, aext = 0;
  CHECK_OK(MPI_Type_get_extent(t, &alb, &aext));
  CHECK(alb == MPI_UNDEFINED && aext == MPI_UNDEFINED, "%s: extent (%lld, %lld)", what, (long long)alb,
        (long long)aext);
}

static void nothing_arrived(const char* what) {
  int flag = 1;
  MPI_Status st;
  CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  CHECK(!flag, "%s: a message of %d bytes arrived", what, (int)st.MPI_TAG);
  if (flag) MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  char buf[64] = {0};
  MPI_Request r = MPI_REQUEST_NULL;

  /* 2^34 bytes per element: fits. */
  MPI_Datatype t34;
  CHECK_OK(MPI_Type_contiguous_c((MPI_Count)1 << 34, MPI_BYTE, &t34));
  CHECK_OK(MPI_Type_commit(&t34));
  MPI_Count sx = 0;
  CHECK_OK(MPI_Type_size_x(t34, &sx));
  CHECK(sx == (MPI_Count)1 << 34, "2^34-byte type: size_x %lld", (long long)sx);

  /* 2^30 of them: 2^64 bytes. */
  const MPI_Count n30 = (MPI_Count)1 << 30;
  CHECK_CLASS(MPI_Send_c(buf, n30, t34, 0, 5, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Send(buf, 1 << 30, t34, 0, 5, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Isend_c(buf, n30, t34, 0, 5, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Ssend_init_c(buf, n30, t34, 0, 5, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Bsend_c(buf, n30, t34, 0, 5, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK(r == MPI_REQUEST_NULL, "a refused call wrote a request");
  nothing_arrived("refused sends of 2^64 bytes");
  CHECK_CLASS(MPI_Irecv_c(buf, n30, t34, 0, 5, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Sendrecv_c(buf, 1, MPI_BYTE, 0, 6, buf, n30, t34, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              MPI_ERR_COUNT);
  nothing_arrived("a refused sendrecv");
  CHECK_CLASS(MPI_Bcast_c(buf, n30, t34, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Allreduce_c(MPI_IN_PLACE, buf, n30, t34, MPI_BOR, MPI_COMM_WORLD), MPI_ERR_COUNT);
  MPI_Count psize = 0, pos = 0;
  CHECK_CLASS(MPI_Pack_size_c(n30, t34, MPI_COMM_WORLD, &psize), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Pack_c(buf, n30, t34, buf, 64, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Unpack_c(buf, 64, &pos, buf, n30, t34, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Pack_external_size_c("external32", n30, t34, &psize), MPI_ERR_COUNT);
  MPI_Status st;
  CHECK_CLASS(MPI_Status_set_elements_x(&st, t34, n30), MPI_ERR_COUNT);
  /* Within range still works: 2^28 elements of it are 2^62 bytes. */
  CHECK_OK(MPI_Pack_size_c((MPI_Count)1 << 28, t34, MPI_COMM_WORLD, &psize));
  CHECK(psize == (MPI_Count)1 << 62, "pack_size of 2^62 bytes: %lld", (long long)psize);

  /* 2^63 bytes: contiguous(2, 2^62-byte type). */
  MPI_Datatype t62, t63, t96;
  CHECK_OK(MPI_Type_contiguous_c((MPI_Count)1 << 28, t34, &t62));
  CHECK_OK(MPI_Type_contiguous(2, t62, &t63));
  CHECK_OK(MPI_Type_commit(&t63));
  check_sizes_undefined(t63, "2^63-byte type");
  CHECK_OK(MPI_Type_contiguous_c((MPI_Count)1 << 62, t34, &t96));
  CHECK_OK(MPI_Type_commit(&t96));
  check_sizes_undefined(t96, "2^96-byte type");
  CHECK_CLASS(MPI_Send(buf, 1, t63, 0, 7, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Send(buf, 1, t96, 0, 7, MPI_COMM_WORLD), MPI_ERR_COUNT);
  nothing_arrived("sends of a 2^63-byte type");
  CHECK_CLASS(MPI_Pack_size(1, t63, MPI_COMM_WORLD, (int*)&psize), MPI_ERR_COUNT);
  /* Zero of them move nothing, and that is fine. */
  CHECK_OK(MPI_Sendrecv(buf, 0, t63, 0, 8, buf, 0, t63, 0, 8, MPI_COMM_WORLD, &st));
  MPI_Count cnt = -5;
  CHECK_OK(MPI_Get_count_c(&st, t63, &cnt));
  CHECK(cnt == 0, "get_count_c of an empty message in a 2^63-byte type: %lld", (long long)cnt);
  CHECK_OK(MPI_Get_elements_x(&st, t63, &cnt));
  CHECK(cnt == 0, "get_elements_x: %lld", (long long)cnt);
  /* Bytes that are not whole elements. */
  CHECK_OK(MPI_Status_set_elements_x(&st, MPI_BYTE, 8));
  CHECK_OK(MPI_Get_count_c(&st, t63, &cnt));
  CHECK(cnt == kUndef, "get_count_c of 8 bytes in a 2^63-byte type: %lld", (long long)cnt);

  /* Subarray of 2^30 x 2^30 x 2^30 doubles, one element picked: 8 bytes of
   * data, bounds of 2^93 bytes. */
  int sizes[3] = {1 << 30, 1 << 30, 1 << 30}, subs[3] = {1, 1, 1}, starts[3] = {0, 0, 0};
  MPI_Datatype sub;
  CHECK_OK(MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &sub));
  CHECK_OK(MPI_Type_commit(&sub));
  CHECK_OK(MPI_Type_size_x(sub, &sx));
  CHECK(sx == 8, "subarray of one double: size_x %lld", (long long)sx);
  MPI_Count lb = 0, ext = 0;
  CHECK_OK(MPI_Type_get_extent_x(sub, &lb, &ext));
  CHECK(lb == kUndef && ext == kUndef, "2^93-byte subarray: extent_x (%lld, %lld)", (long long)lb, (long long)ext);
  CHECK_CLASS(MPI_Send(buf, 1, sub, 0, 9, MPI_COMM_WORLD), MPI_ERR_COUNT);

  /* A vector of small data whose extent passes 2^63. */
  MPI_Datatype wide;
  CHECK_OK(MPI_Type_create_hvector(3, 1, (MPI_Aint)1 << 62, MPI_INT, &wide));
  CHECK_OK(MPI_Type_commit(&wide));
  CHECK_OK(MPI_Type_size_x(wide, &sx));
  CHECK(sx == 12, "hvector of 3 ints: size_x %lld", (long long)sx);
  CHECK_OK(MPI_Type_get_extent_x(wide, &lb, &ext));
  CHECK(lb == kUndef && ext == kUndef, "hvector across 2^63: extent_x (%lld, %lld)", (long long)lb, (long long)ext);
  CHECK_CLASS(MPI_Send(buf, 1, wide, 0, 10, MPI_COMM_WORLD), MPI_ERR_COUNT);
  nothing_arrived("sends of types that do not fit");

  /* Still usable types around them. */
  int v = 5, w = 0;
  CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 11, &w, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(w == 5, "a plain exchange after the refusals gave %d", w);
  MPI_Type_free(&wide);
  MPI_Type_free(&sub);
  MPI_Type_free(&t96);
  MPI_Type_free(&t63);
  MPI_Type_free(&t62);
  MPI_Type_free(&t34);
  return itest_finish("count_overflow");
}
