/**
 * The gathering time of the shared database's group commits (`createGroupCommit`'s `gatherMs`):
 * the first of concurrent sends waits this long for the others, so that they share one
 * transaction, sent whole (`transactionInOneTrip`). Two instances on one 2-core machine moved
 * some 15% more mail with both than with neither (bench/ROUNDS.md, "Gathering, and transactions
 * sent whole"); 1 ms and 4 ms measured against 2 on the warm pair in the README, "Two instances on
 * one MariaDB". NOTE: a module of its own, so the assembly reads it without loading the shared
 * database's libraries (Kysely, mysql2) in a relay that has none.
 */
export const SHARED_GATHER = { gatherMs: 2 } as const;
