/* Example 14.6 of the MPI tool-support chapter ("Tool to Detect Receives
 * with Long Unexpected Message Queues"), a PMPI tool, working against
 * Sonde's MPI_T variables. Adapted only where the chapter says the
 * implementation decides: the variable's name (Sonde's
 * "sonde_unexpected_q_length" instead of "MPI_T_UMQ_LENGTH", so the name
 * buffer is one longer than that) and its datatype (MPI_UNSIGNED_LONG_LONG
 * instead of MPI_INT); the chapter's "execute tool functionality" is a
 * count of detections printed at MPI_Finalize and kept in
 * umq_tool_detections for programs that link the tool in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <assert.h>
#include <mpi.h>

/* Global variables for the tool */
static MPI_T_pvar_session session;
static MPI_T_pvar_handle handle;
int umq_tool_detections = 0;

int MPI_Init(int *argc, char ***argv ) {
  int err, num, i, index, namelen, verbosity;
  int var_class, bind, threadsup;
  int readonly, continuous, atomic, count;
  char name[27];
  MPI_Comm comm;
  MPI_Datatype datatype;
  MPI_T_enum enumtype;

  err=PMPI_Init(argc,argv);
  if (err!=MPI_SUCCESS) return err;

  err=PMPI_T_init_thread(MPI_THREAD_SINGLE,&threadsup);
  if (err!=MPI_SUCCESS) return err;

  err=PMPI_T_pvar_get_num(&num);
  if (err!=MPI_SUCCESS) return err;
  index=-1;
  i=0;
  while ((i<num) && (index<0) && (err==MPI_SUCCESS)) {
    /* Pass a buffer that is at least one character longer than */
    /* the name of the variable being searched for to avoid */
    /* finding variables that have a name that has a prefix */
    /* equal to the name of the variable being searched. */
    namelen=27;
    err=PMPI_T_pvar_get_info(i, name, &namelen, &verbosity,
                             &var_class, &datatype, &enumtype, NULL, NULL, &bind,
                             &readonly, &continuous, &atomic);
    if (strcmp(name,"sonde_unexpected_q_length")==0) index=i;
    i++; }
  if (err!=MPI_SUCCESS) return err;

  /* this could be handled in a more flexible way for a generic tool */
  assert(index>=0);
  assert(var_class==MPI_T_PVAR_CLASS_LEVEL);
  assert(datatype==MPI_UNSIGNED_LONG_LONG);
  assert(bind==MPI_T_BIND_MPI_COMM);

  /* Create a session */
  err=PMPI_T_pvar_session_create(&session);
  if (err!=MPI_SUCCESS) return err;

  /* Get a handle and bind to MPI_COMM_WORLD */
  comm=MPI_COMM_WORLD;
  err=PMPI_T_pvar_handle_alloc(session, index, &comm, &handle, &count);
  if (err!=MPI_SUCCESS) return err;

  /* this could be handled in a more flexible way for a generic tool */
  assert(count==1);

  /* Start variable */
  err=PMPI_T_pvar_start(session, handle);
  /* Sonde's level variables are continuous (always running): starting one
   * is MPI_T_ERR_PVAR_NO_STARTSTOP, as the standard says for continuous
   * variables, and harmless. */
  if (err!=MPI_SUCCESS && err!=MPI_T_ERR_PVAR_NO_STARTSTOP) return err;

  return MPI_SUCCESS;
}

#define THRESHOLD 5

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
             MPI_Comm comm, MPI_Status *status)
{
  unsigned long long value;
  int err;

  if (comm==MPI_COMM_WORLD) {
    err=PMPI_T_pvar_read(session, handle, &value);
    if ((err==MPI_SUCCESS) && (value>THRESHOLD))
    {
      /* tool identified receive called with long UMQ */
      /* execute tool functionality, */
      /* e.g., gather and print call stack */
      umq_tool_detections++;
    }
  }

  return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int MPI_Finalize(void)
{
  int err, rank;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("umq_tool: rank %d: %d receive(s) called with more than %d unexpected messages waiting\n", rank,
         umq_tool_detections, THRESHOLD);
  err=PMPI_T_pvar_handle_free(session, &handle);
  err=PMPI_T_pvar_session_free(&session);
  err=PMPI_T_finalize();
  (void)err;
  return PMPI_Finalize();
}
