/* PERUSE 2.0 specification, Appendix B, 9.1.2 "Using callbacks".
 *
 * Two ranks. Rank 0 registers one callback for
 * PERUSE_COMM_MSG_INSERT_IN_UNEX_Q and PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q on
 * MPI_COMM_WORLD, posts NUM_MSG receives from rank 1, and measures how long
 * each message spent in the unexpected queue (time stamp at insertion, keyed
 * by the message's unique id; difference at removal). Rank 1 sends NUM_MSG
 * messages and, after the one with index NUM_MSG / 2, waits for a zero-byte
 * message from rank 0, which rank 0 sends once all its receives are posted.
 * Rank 0 prints one line per callback, the number of measurements, and the
 * average and maximum time in the unexpected queue.
 *
 * Only messages that arrive before rank 0 posts the matching receive are
 * unexpected, so the number of measurements depends on timing: at most
 * NUM_MSG / 2 + 1 (the messages rank 1 may send before it waits), possibly 0
 * (then the average prints as nan). Every message is either a measurement
 * or matched a posted receive.
 *
 * The code below is the specification's, as printed. Repairs of text
 * extraction damage, none changing what the program does:
 * - Spaces for underscores in identifiers: `num stamps`, `measure t`,
 *   `hash elem t`, `MPI Aint` (twice), `h elem` (twice),
 *   `callback unex` (twice), `peruse event h event h`, `unique id` (twice),
 *   `event name` (twice), `helem`'s type `hash elem t`, `PERUSE Event get`,
 *   `PERUSE COMM MSG REMOVE FROM UNEX Q`, `MPI Wtime`, `mt->num stamps`,
 *   `MPI SUCCESS`, `MPI Comm wrld = MPI COMM WORLD`, `MPI Init`,
 *   `PERUSE Init`, `PERUSE SUCCESS`, `PERUSE Event comm register`,
 *   `PERUSE COMM MSG INSERT IN UNEX Q`, `e unex insert` (twice),
 *   `NUM MSG` (four times), `MPI Irecv`, `MSG SIZE` (twice), `MPI INT`
 *   (twice), `MPI Send` (twice), `MPI Wait`, `PERUSE Event deactivate`,
 *   `unex.num stamps`.
 * - `typedef struct hash elem t`: the structure's tag is `_hash_elem_t`, as
 *   its own `next` member spells it.
 * - `/\star ... \star/`, `mt \rightarrow max` and `\{0, 0.0, 0.0\}`: TeX
 *   for a comment's stars, `->` and braces.
 * - The closing braces of rank 1's loop, of its `else if` block and of
 *   main() were lost at a page break; restored (indentation of the lines
 *   around them too).
 *
 * Not OCR (the spec's code is incomplete here):
 * - HashGetElem() is a stub whose body is only the comment "use some hash
 *   function to find an existing element with key in the hash table or
 *   allocate a new element", and returns an uninitialized pointer that the
 *   callback then writes through. Filled in with exactly that: a fixed table
 *   of HASH_SIZE chains, found or newly allocated (zeroed). The program's
 *   own `HashTableSetup()`/`HashTableCleanup()` calls stay commented out as
 *   in the spec; the table needs no set-up.
 *
 * The callback calls MPI_Wtime, which the specification (5.1.2) allows in
 * callbacks, and printf/PERUSE_Query_event_name, which Sonde allows (its
 * callbacks run on the thread that drives progress, never inside a signal
 * handler).
 */
#include <stdio.h>
#include <stdlib.h>
#include "mpi.h"
#include "peruse.h"
#define NUM_MSG 100
#define MSG_SIZE 160
typedef struct
{
        int num_stamps;
        double time;
        double max;
} measure_t;
typedef struct _hash_elem_t
{
        MPI_Aint key;
        double stamp;
        struct _hash_elem_t *next;
} hash_elem_t;
#define HASH_SIZE 256 /* not in the spec: see the header comment */
hash_elem_t *HashGetElem (MPI_Aint key)
{
        hash_elem_t *h_elem;
        /* Use some hash function to find an existing element with key
         * in the hash table or allocate a new element */
        static hash_elem_t *table[HASH_SIZE]; /* not in the spec */
        unsigned long idx = (unsigned long)key % HASH_SIZE;
        for(h_elem = table[idx]; h_elem != NULL; h_elem = h_elem->next)
                if(h_elem->key == key)
                        return h_elem;
        h_elem = (hash_elem_t *)calloc(1, sizeof(hash_elem_t));
        h_elem->key = key;
        h_elem->next = table[idx];
        table[idx] = h_elem;
        return h_elem;
}
int callback_unex(peruse_event_h event_h, MPI_Aint unique_id,
                        peruse_comm_spec_t *cs, void *param)
{
        measure_t *mt = (measure_t *)param;
        char *event_name;
        int event;
        double t;
        hash_elem_t *helem;
        PERUSE_Event_get(event_h, &event);
        PERUSE_Query_event_name(event, &event_name);
        printf("Callback called for event %s\n", event_name);
        helem = HashGetElem(unique_id);
        switch(event)
        {
        case PERUSE_COMM_MSG_INSERT_IN_UNEX_Q:
                helem->stamp = MPI_Wtime();
                break;
        case PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q:
                t = MPI_Wtime() - helem->stamp;
                mt->time += t;
                if(t > mt->max)
                        mt->max = t;
                mt->num_stamps++;
                break;
        default:
                printf("Unexpected event in callback\n");
                return MPI_ERR_INTERN;
        }
        return MPI_SUCCESS;
}
int msg[MSG_SIZE];
int main(int argc, char **argv)
{
        peruse_event_h e_unex_insert, e_unex_remove;
        int rv, size, i, rank, stat;
        MPI_Comm wrld = MPI_COMM_WORLD;
        MPI_Status status;
        MPI_Request r[NUM_MSG];
        measure_t unex = {0, 0.0, 0.0};
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        rv = PERUSE_Init();
        if (rv != PERUSE_SUCCESS)
        {
                printf("Error in PERUSE Init: rv=%d\n", rv);
                fflush(stdout);
                exit(1);
        }
        /* HashTableSetup(); */
        if(rank == 0)
        {
                /* Interested only in rank 0 */
                PERUSE_Event_comm_register(PERUSE_COMM_MSG_INSERT_IN_UNEX_Q,
                        wrld, callback_unex, &unex, &e_unex_insert);
                PERUSE_Event_comm_register(PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q,
                        wrld, callback_unex, &unex, &e_unex_remove);
                PERUSE_Event_activate(e_unex_insert);
                PERUSE_Event_activate(e_unex_remove);
                for (i = 0; i < NUM_MSG; i++)
                        MPI_Irecv(msg, MSG_SIZE, MPI_INT, 1, 0, wrld, &r[i]);
                MPI_Send(NULL, 0, MPI_INT, 1, 0, wrld);
                for (i = 0; i < NUM_MSG; i++)
                        MPI_Wait(&r[i], &status);
                PERUSE_Event_deactivate(e_unex_insert);
                PERUSE_Event_deactivate(e_unex_remove);
                printf("Number of measurements: %d\n", unex.num_stamps);
                printf("Average time in unexpected queue: %f sec\n",
                                unex.time / unex.num_stamps);
                printf("maximum time in unexpected queue: %f sec\n",
                                 unex.max);
                PERUSE_Event_release(&e_unex_insert);
                PERUSE_Event_release(&e_unex_remove);
        }
        else if (rank == 1)
        {
                for (i = 0; i < NUM_MSG; i++)
                {
                        MPI_Send(msg, MSG_SIZE, MPI_INT, 0, 0, wrld);
                        if(i == NUM_MSG / 2)
                                MPI_Recv(NULL, 0, MPI_INT, 0, 0, wrld, &status);
                }
        }
        MPI_Finalize();
        /* HashTableCleanup(); */
        return 0;
}
