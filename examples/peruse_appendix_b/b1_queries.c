/* PERUSE 2.0 specification, Appendix B, 9.1.1 "Using environment, event,
 * and queue event scope queries".
 *
 * Prints the library's environment (PERUSE_Query_environment), every
 * supported event with its descriptor (PERUSE_Query_supported_events), the
 * queue event scope (PERUSE_Query_queue_event_scope), and whether each of the
 * twelve request/message events is supported (PERUSE_Query_event).
 *
 * The code below is the specification's, as printed. Repairs, all of them
 * damage from the text extraction of the PDF, none changing what the program
 * does:
 * - Identifiers and string contents with spaces where the source has
 *   underscores: "PERUSE COMM REQ ACTIVATE", "PERUSE COMM REQ REMOVE FROM
 *   POSTED Q", "PERUSE COMM REQ XFER BEGIN", "PERUSE COMM REQ XFER END",
 *   "PERUSE COMM MSG ARRIVED", "PERUSE COMM MSG MATCH POSTED REQ",
 *   `n sup` (twice), `MPI Init`, `MPI Finalize`.
 * - `n \sup` in the loop bound: a TeX escape that replaced `n_sup`.
 * - The comma after "PERUSE_COMM_REQ_MATCH_UNEX" was lost, so C would
 *   concatenate it with the next string into one bogus event name and the
 *   table would have eleven entries instead of twelve; restored.
 * - Indentation of the "PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q" entry and of the
 *   wrapped printf argument (whitespace only).
 */
#include <stdio.h>
#include <stdlib.h>
#include "mpi.h"
#include "peruse.h"
char *ename[] =
{
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
        NULL
};
int main(int argc, char **argv)
{
        int eid, *eids;
        char **env, **names;
        int rv, size, i, scope = -1, n_sup;
        MPI_Init(&argc, &argv);
        PERUSE_Init();
        PERUSE_Query_environment(&size, &env);
        printf("Number of env. variables: %d\n", size);
        for(i = 0; i < size; i++)
                 printf("%s\n", env[i]);
        PERUSE_Query_supported_events(&n_sup, &names, &eids);
        printf("Number of supported events: %d\n", n_sup);
        for(i = 0; i < n_sup; i++)
                 printf("%s=%d\n", names[i], eids[i]);
        PERUSE_Query_queue_event_scope(&scope);
        printf("SCOPE=%s\n", (scope == PERUSE_PER_COMM) ?
                "PER_COMM" : "GLOBAL");
        for(i = 0; ename[i] != NULL; i++)
        {
                 rv = PERUSE_Query_event(ename[i], &eid);
                 printf("event=%s, event ID=%d is %s\n",
                          ename[i], eid,
                          (rv == PERUSE_SUCCESS) ? "supported":"unsupported");
        }
        MPI_Finalize();
        return 0;
}
