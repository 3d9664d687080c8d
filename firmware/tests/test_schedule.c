/* Epoch boundaries and slot times of the slotted schedule (core/schedule.h). */
#include "check.h"
#include "core/schedule.h"

int main(int argc, char **argv)
{
    (void)argc;
    /* 10-ms units honoured exactly: 102 units = 1020 ms, not 768 (A2) */
    CHECK_EQ(sched_epoch_ms(102), 1020);
    CHECK_EQ(sched_epoch_ms(0x7FFF), SCHED_ONCE_MS);
    CHECK_EQ(sched_interval_ms(1600), 1600 / SCHED_INTERVALS);
    CHECK_EQ(SCHED_INTERVALS, 8); /* bound 6: 125-ms intervals at 1 s (core/schedule.h) */
    CHECK_EQ(sched_interval_ms(5), 1);
    CHECK_EQ(sched_next_boundary(0, 1000), 0);
    CHECK_EQ(sched_next_boundary(1, 1000), 1000);
    CHECK_EQ(sched_next_boundary(2500, 1000), 3000);
    CHECK_EQ(sched_next_boundary(3000, 1000), 3000);
    /* epoch [3200, 4800), 8 intervals of 200 ms counted back from the end */
    CHECK_EQ(sched_interval_start(3200, 1600, 0), 4600); /* root transmits last */
    CHECK_EQ(sched_interval_start(3200, 1600, 1), 4400); /* depth 1 transmits, root listens */
    CHECK_EQ(sched_interval_start(3200, 1600, 2), 4200);
    CHECK_EQ(sched_interval_start(3200, 1600, SCHED_MAX_DEPTH + 1), 3200); /* deepest listen */
    CHECK_EQ(sched_slot_depth(3), 3);
    CHECK_EQ(sched_slot_depth(40), SCHED_MAX_DEPTH);
    CHECK_EQ(sched_slot_depth(0xFF), SCHED_MAX_DEPTH);
    CHECK(sched_due(100, 100));
    CHECK(!sched_due(101, 100));
    CHECK(sched_due(0xFFFFFFF0u, 5)); /* across the wrap */
    return check_report(argv[0]);
}
