/* PERUSE 2.0 specification, Appendix B, 9.1.4 "Counting posted and
 * unexpected receives".
 *
 * Any number of ranks. Each rank looks up the four queue events by name,
 * registers one callback for them on MPI_COMM_WORLD, activates them around
 * UserMpiProcessing() (the application code being studied) and then prints,
 * for every peer rank: the number of messages from that peer that went
 * through the unexpected queue, the number of receives from that peer that
 * went through the posted queue, and the maximum and running average length
 * of each queue (counted per peer, integer arithmetic).
 *
 * In the specification UserMpiProcessing() is an empty stub: built as it is
 * (the default) the program sends nothing and reports zeros. Built with
 * -DAPPB_EXTERNAL_USER_CODE, the stub is left out and UserMpiProcessing()
 * comes from another file (tests/peruse_appendix_b/b4_traffic.c supplies
 * traffic with known counts). That switch is the only addition to the
 * program's text besides the repairs below.
 *
 * Repairs of text extraction damage, none changing what the program does:
 * - Spaces for underscores in identifiers and in the event names the
 *   program looks up: "PERUSE COMM REQ INSERT IN POSTED Q",
 *   "PERUSE COMM REQ REMOVE FROM POSTED Q",
 *   "PERUSE COMM_MSG_INSERT_IN_UNEX_Q"; `unex num`, `unex len`,
 *   `unex max len`, `unex ave len`, `posted num`, `posted len`,
 *   `posted ave len`, `measure t`, `PERUSE Event get`,
 *   `PERUSE COMM REQ INSERT IN POSTED Q`,
 *   `PERUSE COMM REQ REMOVE FROM POSTED Q`,
 *   `PERUSE COMM MSG REMOVE FROM UNEX Q`, `MPI SUCCESS`,
 *   `peruse event h`, `MPI Comm size`, `MPI Comm rank`, `MPI COMM WORLD`,
 *   `my rank`, `PERUSE SUCCESS`, `PERUSE Event activate`,
 *   `PERUSE Event deactivate`.
 * - A stray `</pre>` (HTML) after two `for(...)` headers, removed; so are
 *   the page number (42) and the Markdown fences between pages.
 * - The format string "number of posted receives    : %d\n" was broken
 *   across two lines (a string literal cannot span lines); rejoined, with
 *   the colon aligned to the line above it as the layout suggests.
 * - The report loop `for(i = 0; i < np; i++)` lost its braces at a page
 *   break (without them only the first printf is in the loop and the others
 *   read darr[np], past the end of the array); restored, with main()'s
 *   indentation.
 *
 * Not OCR:
 * - main() returns without calling MPI_Finalize, which MPI requires of
 *   every process (Sonde's launcher treats a rank that exits without it as
 *   a failed job). Added MPI_Finalize() before the final return.
 *
 * Kept as printed: the unused variable `t` in the callback (-Wall notes
 * it), and `darr[spec->peer]`, which assumes a real peer rank: a receive
 * posted with MPI_ANY_SOURCE in UserMpiProcessing() would index darr[-1].
 */
#include <stdio.h>
#include <stdlib.h>
#include "mpi.h"
#include "peruse.h"
#define QEVENTS (4)
/* Queue events */
char *qevents[QEVENTS] =
{
        "PERUSE_COMM_REQ_INSERT_IN_POSTED_Q",
        "PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q",
        "PERUSE_COMM_MSG_INSERT_IN_UNEX_Q",
        "PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q"
};
/* Declaration of a type for collecting statistics */
typedef struct _measure_t
{
        int unex_num;
        int unex_len;
        int unex_max_len;
        int unex_ave_len;
        int posted_num;
        int posted_len;
        int posted_max_len;
        int posted_ave_len;
} measure_t;
measure_t *darr;
int np, my_rank;
/* Callback for collecting statistics */
int qcallback(peruse_event_h eh, MPI_Aint unique_id,
                        peruse_comm_spec_t *spec, void *param)
{
        double t;
        int event;
        measure_t *mt;
        PERUSE_Event_get(eh, &event);
        mt = &darr[spec->peer]; /* get the data element for the peer */
        switch(event)
        {
        case PERUSE_COMM_REQ_INSERT_IN_POSTED_Q:
                mt->posted_num++;
                mt->posted_len++;
                if(mt->posted_len > mt->posted_max_len)
                        mt->posted_max_len = mt->posted_len;
                mt->posted_ave_len =
                         ((mt->posted_num - 1) * mt->posted_ave_len +
                                mt->posted_len) / mt->posted_num;
                break;
        case PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q:
                mt->posted_len--;
                break;
        case PERUSE_COMM_MSG_INSERT_IN_UNEX_Q:
                mt->unex_num++;
                mt->unex_len++;
                if(mt->unex_len > mt->unex_max_len)
                        mt->unex_max_len = mt->unex_len;
                mt->unex_ave_len =
                        ((mt->unex_num - 1) * mt->unex_ave_len +
                                mt->unex_len) / mt->unex_num;
                break;
        case PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q:
                mt->unex_len--;
                break;
        default:
                printf("Unexpected event in callback\n");
                return MPI_ERR_INTERN;
        }
        return MPI_SUCCESS;
}
#ifndef APPB_EXTERNAL_USER_CODE /* not in the spec: see the header comment */
void UserMpiProcessing(){}
#else
void UserMpiProcessing(void);
#endif
int main(int argc, char **argv)
{
        int i, rv, eid[QEVENTS];
        peruse_event_h eh[QEVENTS];
        MPI_Init(&argc, &argv);
        MPI_Comm_size(MPI_COMM_WORLD, &np);
        MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
        /* Initialize PERUSE */
        rv = PERUSE_Init();
        if(rv != PERUSE_SUCCESS)
        {
                printf("Unable to initialize PERUSE\n");
                return 1;
        }
        darr = (measure_t *)calloc(np, sizeof(measure_t));
        /* Initialize queue event handles and activate them */
        for(i = 0; i < QEVENTS; i++)
        {
                PERUSE_Query_event(qevents[i], &eid[i]);
                PERUSE_Event_comm_register(eid[i], MPI_COMM_WORLD, qcallback,
                                                 NULL, &eh[i]);
                PERUSE_Event_activate(eh[i]);
        }
        /* User code subjected to PERUSE evaluation */
        UserMpiProcessing();
        /* Deactivate event handles and free them */
        for(i = 0; i < QEVENTS; i++)
        {
                PERUSE_Event_deactivate(eh[i]);
                PERUSE_Event_release(&eh[i]);
        }
        /* Report results */
        for(i = 0; i < np; i++)
        {
                printf("===== Peer rank: %d =====\n", i);
                printf("number of unexpected messages: %d\n",
                                        darr[i].unex_num);
                printf("max unexpected queue length: %d\n",
                                        darr[i].unex_max_len);
                printf("ave unexpected queue length: %d\n",
                                        darr[i].unex_ave_len);
                printf("number of posted receives    : %d\n",
                                        darr[i].posted_num);
                printf("max posted queue length: %d\n",
                                        darr[i].posted_max_len);
                printf("ave posted queue length: %d\n",
                                        darr[i].posted_ave_len);
        }
        free(darr);
        MPI_Finalize(); /* not in the spec: see the header comment */
        return 0;
}
