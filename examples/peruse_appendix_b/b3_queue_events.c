/* PERUSE 2.0 specification, Appendix B, 9.1.3 "Using queue events".
 *
 * Two ranks. Every rank registers one callback for the four queue-search
 * events (PERUSE_COMM_SEARCH_POSTED_Q_BEGIN/END,
 * PERUSE_COMM_SEARCH_UNEX_QUEUE_BEGIN/PERUSE_COMM_SEARCH_UNEX_Q_END) on
 * MPI_COMM_WORLD; only rank 0 activates them, around the same traffic as
 * 9.1.2 (NUM_MSG receives posted from rank 1, a zero-byte message back that
 * rank 1 waits for after its message number NUM_MSG / 4). The callback's
 * bodies are comments in the specification (take time stamps, add up the
 * time spent searching each queue), so the program computes and prints
 * nothing; it shows how to register, activate, deactivate and release. The
 * callback returns MPI_ERR_INTERN for any other event, which would end the
 * job, so a clean exit means it only ever saw the four events.
 *
 * The code below is the specification's, as printed. Repairs of text
 * extraction damage, none changing what the program does:
 * - Spaces for underscores in identifiers: `NUM MSG`, `MSG SIZE`,
 *   `NUM Q EVENTS` (in the #defines and their uses), `peruse event h
 *   event h`, `unique id`, `peruse comm spec t`, `PERUSE COMM SEARCH POSTED
 *   Q BEGIN`, `PERUSE COMM SEARCH UNEX QUEUE BEGIN`, `MPI SUCCESS`,
 *   `MPI COMM WORLD`, `MPI Status`, `MPI Request`, `MPI Init`,
 *   `PERUSE Init`, `PERUSE SUCCESS` (three times), `PERUSE Event comm
 *   register`, `MPI Finalize` (twice), `MPI Barrier`, `MPI Irecv`,
 *   `MPI INT` (three times), `MPI Send`, `PERUSE Event deactivate`,
 *   `MPI Recv`, `PERUSE Event release`.
 * - The values of the three #defines (100, 160, 4) were printed on the
 *   line after the names; rejoined.
 * - A stray `</pre>` (HTML) after five `for(...)` headers, removed.
 * - At a page break the callback's closing brace was lost and main()'s
 *   opening brace landed before `int msg[MSG_SIZE];`; put back in place.
 * - main()'s closing brace was lost at the end of the listing; restored.
 * - Indentation (whitespace only).
 *
 * Kept as printed: the names PERUSE_COMM_SEARCH_UNEX_QUEUE_BEGIN (the
 * specification uses both spellings; Sonde's peruse.h defines both) and the
 * unused variables `size` and `stat` (-Wall notes them).
 */
#include <stdio.h>
#include <stdlib.h>
#include "mpi.h"
#include "peruse.h"
#define NUM_MSG                    100
#define MSG_SIZE                   160
#define NUM_Q_EVENTS             4
int qevents[NUM_Q_EVENTS] =
{
        PERUSE_COMM_SEARCH_POSTED_Q_BEGIN,
        PERUSE_COMM_SEARCH_POSTED_Q_END,
        PERUSE_COMM_SEARCH_UNEX_QUEUE_BEGIN,
        PERUSE_COMM_SEARCH_UNEX_Q_END
};
double time_in_unex_q = 0.0, time_in_posted_q = 0.0;
int callback (peruse_event_h event_h, MPI_Aint unique_id,
                         peruse_comm_spec_t *cs, void *param)
{
        int event;
        PERUSE_Event_get(event_h, &event);
        switch (event)
        {
        case PERUSE_COMM_SEARCH_POSTED_Q_BEGIN:
                 /* Take a time stamp for unique id */
                 break;
        case PERUSE_COMM_SEARCH_POSTED_Q_END:
                 /* Take a time stamp for unique_id, substract
                  * previous time stamp, and add to time_in_posted_q */
                 break;
        case PERUSE_COMM_SEARCH_UNEX_QUEUE_BEGIN:
                 /* Take a time stamp for unique_id */
                 break;
        case PERUSE_COMM_SEARCH_UNEX_Q_END:
                 /* Take a time stamp for unique id, substract
                  * previous time stamp, and add to time in unex q */
                 break;
        default:
                 printf("Unexpected event\n");
                 return MPI_ERR_INTERN;
        }
        return MPI_SUCCESS;
}
int msg[MSG_SIZE];
int main(int argc, char **argv)
{
        peruse_event_h eh[NUM_Q_EVENTS];
        int rv, size, i, rank, stat;
        MPI_Comm wrld = MPI_COMM_WORLD;
        MPI_Status status;
        MPI_Request r[NUM_MSG];
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        rv = PERUSE_Init();
        if(rv != PERUSE_SUCCESS)
        {
                printf("Error in PERUSE Init: rv=%d\n", rv);
                fflush(stdout);
                exit(1);
        }
        rv = PERUSE_SUCCESS;
        for(i = 0; i < NUM_Q_EVENTS; i++)
                rv |= PERUSE_Event_comm_register(qevents[i], wrld,
                         callback, NULL, &eh[i]);
        if(rv != PERUSE_SUCCESS)
        {
                printf("Cannot register events\n");
                fflush(stdout);
                MPI_Finalize();
                exit(1);
        }
        MPI_Barrier(wrld);
        if(rank == 0)
        {
                for(i = 0; i < NUM_Q_EVENTS; i++)
                         PERUSE_Event_activate(eh[i]);
                for (i = 0; i < NUM_MSG; i++)
                         MPI_Irecv(msg, MSG_SIZE, MPI_INT, 1, 0, wrld, &r[i]);
                MPI_Send(NULL, 0, MPI_INT, 1, 0, wrld);
                for(i = 0; i < NUM_MSG; i++)
                         MPI_Wait(&r[i], &status);
                for(i = 0; i < NUM_Q_EVENTS; i++)
                         PERUSE_Event_deactivate(eh[i]);
        }
        else if (rank == 1)
        {
                for(i = 0; i < NUM_MSG; i++)
                {
                         MPI_Send(msg, MSG_SIZE, MPI_INT, 0, 0, wrld);
                         if(i == NUM_MSG / 4)
                                 MPI_Recv(NULL, 0, MPI_INT, 0, 0, wrld, &status);
                }
        }
        for(i = 0; i < NUM_Q_EVENTS; i++)
                PERUSE_Event_release(&eh[i]);
        MPI_Finalize();
        return 0;
}
