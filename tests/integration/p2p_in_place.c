/* MPI_IN_PLACE is a collective's buffer only: every point-to-point call
 * that takes a buffer -- blocking, nonblocking and persistent sends in every
 * mode, receives, Sendrecv (either side), Sendrecv_replace, their
 * nonblocking forms, matched receives, and the large-count _c forms --
 * refuses it with MPI_ERR_BUFFER instead of reading or writing through it.
 * Nothing is sent, posted or consumed by a refused call: the exchange that
 * follows sees exactly its own messages, and the probed message a refused
 * MPI_Mrecv left alone is still there to receive. Two ranks.
 */
#include "tests/integration/itest.h"

#define IP MPI_IN_PLACE

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int peer = 1 - itest_rank;
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Status st;

  /* Sends, in every mode and form. */
  CHECK_CLASS(MPI_Send(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Ssend(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Bsend(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Rsend(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Send(IP, 0, MPI_INT, peer, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Send_c(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Isend(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Issend(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Ibsend(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Irsend(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Isend_c(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Send_init(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Ssend_init(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Bsend_init(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Rsend_init(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Send_init_c(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK(r == MPI_REQUEST_NULL, "a refused call wrote a request handle");

  /* Receives. */
  CHECK_CLASS(MPI_Recv(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Recv_c(IP, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Irecv(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Irecv_c(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Recv_init(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Recv_init_c(IP, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK(r == MPI_REQUEST_NULL, "a refused call wrote a request handle");

  /* Send-receive: either side, and the replace forms. */
  int v[4] = {0, 0, 0, 0};
  CHECK_CLASS(MPI_Sendrecv(IP, 4, MPI_INT, peer, 2, v, 4, MPI_INT, peer, 2, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Sendrecv(v, 4, MPI_INT, peer, 2, IP, 4, MPI_INT, peer, 2, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Sendrecv_c(IP, 4, MPI_INT, peer, 2, v, 4, MPI_INT, peer, 2, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Sendrecv_replace(IP, 4, MPI_INT, peer, 2, peer, 2, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Sendrecv_replace_c(IP, 4, MPI_INT, peer, 2, peer, 2, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Isendrecv(IP, 4, MPI_INT, peer, 2, v, 4, MPI_INT, peer, 2, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Isendrecv(v, 4, MPI_INT, peer, 2, IP, 4, MPI_INT, peer, 2, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Isendrecv_replace(IP, 4, MPI_INT, peer, 2, peer, 2, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK(r == MPI_REQUEST_NULL, "a refused call wrote a request handle");

  /* Nothing went out: the one message each rank now sends is the first and
   * only one its peer finds. */
  int out[4] = {itest_rank, 10, 20, 30}, in[4] = {-1, -1, -1, -1};
  CHECK_OK(MPI_Send(out, 4, MPI_INT, peer, 3, MPI_COMM_WORLD));
  MPI_Message m = MPI_MESSAGE_NULL;
  CHECK_OK(MPI_Mprobe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st));
  CHECK(st.MPI_TAG == 3, "first message from the peer has tag %d, want 3 (a refused call sent one)", st.MPI_TAG);
  /* Matched receives refuse it too, and leave the message for a real one. */
  MPI_Message keep = m;
  CHECK_CLASS(MPI_Mrecv(IP, 4, MPI_INT, &m, &st), MPI_ERR_BUFFER);
  CHECK(m == keep, "a refused MPI_Mrecv consumed the message handle");
  CHECK_CLASS(MPI_Imrecv(IP, 4, MPI_INT, &m, &r), MPI_ERR_BUFFER);
  CHECK(m == keep, "a refused MPI_Imrecv consumed the message handle");
  CHECK_CLASS(MPI_Mrecv_c(IP, 4, MPI_INT, &m, &st), MPI_ERR_BUFFER);
  CHECK_OK(MPI_Mrecv(in, 4, MPI_INT, &m, &st));
  CHECK(in[0] == peer && in[1] == 10 && in[3] == 30, "received %d %d %d %d", in[0], in[1], in[2], in[3]);
  int flag = 1;
  CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  CHECK(!flag, "a message from tag %d is left over", st.MPI_TAG);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  return itest_finish("p2p_in_place");
}
