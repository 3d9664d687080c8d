/* Epoch numbers, interval times and down slots of the schedule (core/schedule.h). */
#include "check.h"
#include "core/schedule.h"

static void test_units_and_intervals(void)
{
    /* 10-ms units honoured exactly: 102 units = 1020 ms, not 768 (A2) */
    CHECK_EQ(sched_epoch_ms(102), 1020);
    CHECK_EQ(sched_epoch_ms(0x7FFF), SCHED_ONCE_MS);
    /* About a second an interval (a level's sends and resends), 4 to 8 of them; short
     * epochs keep 8 */
    CHECK_EQ(sched_intervals(1020), 8);
    CHECK_EQ(sched_intervals(1530), 8);
    CHECK_EQ(sched_intervals(1540), 4);
    CHECK_EQ(sched_intervals(1600), 4);
    CHECK_EQ(sched_interval_ms(1600), 400);
    CHECK_EQ(sched_intervals(2040), 4);
    CHECK_EQ(sched_intervals(4090), 4);
    CHECK_EQ(sched_intervals(6000), 6);
    CHECK_EQ(sched_intervals(8190), 8);
    CHECK_EQ(sched_intervals(31000), 8);
    CHECK_EQ(sched_interval_ms(31000), 3875);
    CHECK_EQ(sched_interval_ms(5), 1);
    /* epoch [3200, 4800), 4 intervals of 400 ms counted back from the end */
    CHECK_EQ(sched_interval_start(3200, 1600, 0), 4400); /* root transmits last */
    CHECK_EQ(sched_interval_start(3200, 1600, 1), 4000); /* depth 1 transmits, root listens */
    CHECK_EQ(sched_interval_start(3200, 1600, 3), 3200);
    /* deeper levels continue back into earlier epochs' time: no clamp */
    CHECK_EQ(sched_interval_start(3200, 1600, 5), 2400);
    CHECK_EQ(sched_slot_depth(3), 3);
    CHECK_EQ(sched_slot_depth(40), 40);
    CHECK_EQ(sched_slot_depth(254), 254);
    CHECK_EQ(sched_slot_depth(0xFF), SCHED_UNROUTED_SLOT);
}

static void test_epoch_numbers(void)
{
    /* The root starts epoch 1 a start delay and at least one epoch after `now`. */
    CHECK_EQ(sched_start_base(10000, 1000, SCHED_DEPTH_UNKNOWN), 15); /* 10000 + 4096 -> 15000 */
    CHECK_EQ(sched_start_base(10000, 8000, SCHED_DEPTH_UNKNOWN), 3);  /* 10000 + 8000 -> 24000 */
    CHECK_EQ(sched_start_base(10000, 1000, 9), 15); /* a 10x10 grid: the delay covers it */
    /* 150 levels at 1 s: the wave takes 2048 + 150 x 64 ms, level 150 begins 152 x 125 ms
     * before epoch 1 ends: 10000 + 11648 + 19000 - 1000 -> boundary 40000 */
    CHECK_EQ(sched_start_base(10000, 1000, 150), 40);
    CHECK_EQ(sched_label_start(15, 1000, 1), 15000);
    CHECK_EQ(sched_label_start(15, 1000, 4), 18000);
    /* A new rate numbers on: epoch 7 starts at 21000 with 500-ms epochs. */
    CHECK_EQ(sched_label_start(sched_rebase(21000, 500, 7), 500, 7), 21000);
    CHECK_EQ(sched_label_start(sched_rebase(21000, 500, 7), 500, 8), 21500);
    /* Next epoch to work on: depth 0 begins 2 intervals before the end (children's). */
    CHECK_EQ(sched_next_label(14000, 15, 1000, 0, 1), 1); /* before the start: epoch 1 */
    CHECK_EQ(sched_next_label(15000, 15, 1000, 0, 1), 1); /* 15750 still ahead */
    CHECK_EQ(sched_next_label(15800, 15, 1000, 0, 1), 2); /* epoch 1's work began */
    CHECK_EQ(sched_next_label(15800, 15, 1000, 0, 5), 5); /* never one already done */
    /* Depth 20: work on epoch e starts 22 intervals (2.75 epochs) before its end. */
    CHECK_EQ(sched_next_label(13000, 15, 1000, 20, 1), 1); /* 16000 - 2750 = 13250 ahead */
    CHECK_EQ(sched_next_label(14000, 15, 1000, 20, 1), 2); /* passed: epoch 2, at 14250 */
    CHECK_EQ(sched_next_label(14300, 15, 1000, 20, 1), 3);
    CHECK_EQ(sched_work_start(15, 1000, 20, 2), 14250);
    CHECK_EQ(sched_work_start(15, 1000, 0, 1), 15750);
    /* 2 s epochs, 4 intervals of 510 ms: depth 3 begins 5 x 510 ms before the end */
    CHECK_EQ(sched_work_start(15, 2040, 3, 1), 16u * 2040u - 2550u);
}

static void test_down_slots(void)
{
    /* Slot of depth d starts d x 64 ms (a send and a backoff at 19.2 kbit/s) into
     * every 1024-ms control period. */
    CHECK_EQ(SCHED_CTL_SLOT_MS, 64);
    CHECK_EQ(sched_down_offset(2048, 0), 0);
    CHECK_EQ(sched_down_offset(2048 + 63, 0), 63);
    CHECK_EQ(sched_down_offset(2048 + 64, 1), 0);
    CHECK_EQ(sched_down_offset(2048 + 10, 1), SCHED_CTL_PERIOD_MS - 54);
    /* depth 40 wraps: 2560 % 1024 = 512 */
    CHECK_EQ(sched_down_offset(2048 + 512, 40), 0);
    CHECK_EQ(sched_down_offset(0xFFFFFC00u + 5, 0), 5); /* across the clock's wrap */
}

int main(int argc, char **argv)
{
    (void)argc;
    test_units_and_intervals();
    test_epoch_numbers();
    test_down_slots();
    CHECK(sched_due(100, 100));
    CHECK(!sched_due(101, 100));
    CHECK(sched_due(0xFFFFFFF0u, 5)); /* across the wrap */
    CHECK(sched_within(105, 100, 10));
    CHECK(!sched_within(110, 100, 10));
    return check_report(argv[0]);
}
