/* Radio output queue (net/radioq.h): the three policies when full, DELTA ordering and rescoring. */
#include <string.h>

#include "check.h"
#include "net/radioq.h"

static radioq_entry result(uint8_t qid, uint16_t origin, uint16_t epoch, int16_t value)
{
    radioq_entry e;

    memset(&e, 0, sizeof e);
    e.qid = qid;
    e.origin = origin;
    e.epoch = epoch;
    e.value = value;
    e.len = 3;
    e.payload[0] = qid;
    e.payload[1] = (uint8_t)epoch;
    e.payload[2] = (uint8_t)value;
    return e;
}

static uint16_t pop_epoch(radioq *q)
{
    radioq_entry out;

    return radioq_pop(q, &out) ? out.epoch : 0xFFFFu;
}

static void push(radioq *q, uint8_t qid, uint16_t origin, uint16_t epoch, int16_t value, uint8_t want)
{
    radioq_entry e = result(qid, origin, epoch, value);

    CHECK_EQ(radioq_push(q, &e), want);
}

static void test_defaults_and_bounds(void)
{
    radioq q;
    radioq_entry e = result(1, 1, 1, 1);
    radioq_entry out;

    radioq_init(&q, NULL, NULL);
    CHECK_EQ(radioq_len(&q), RADIOQ_DEFAULT_LEN);
    CHECK_EQ(radioq_policy_of(&q), RADIOQ_NAIVE);
    CHECK(radioq_peek(&q) == NULL);
    CHECK_EQ(radioq_pop(&q, &out), 0);
    CHECK_EQ(radioq_set_len(&q, 0), 0);
    CHECK_EQ(radioq_set_len(&q, RADIOQ_MAX_LEN + 1), 0);
    CHECK_EQ(radioq_set_policy(&q, 3), 0);
    CHECK_EQ(radioq_len(&q), RADIOQ_DEFAULT_LEN);
    e.len = RADIOQ_PAYLOAD_MAX + 1;
    CHECK_EQ(radioq_push(&q, &e), 0);
    CHECK_EQ(radioq_count(&q), 0);
    /* payload and metadata come back intact; count 0 is taken as 1 */
    e = result(9, 0x0203, 77, -5);
    e.len = RADIOQ_PAYLOAD_MAX;
    memset(e.payload, 0xA5, sizeof e.payload);
    CHECK_EQ(radioq_push(&q, &e), 1);
    CHECK_EQ(radioq_pop(&q, &out), 1);
    CHECK_EQ(out.qid, 9);
    CHECK_EQ(out.origin, 0x0203);
    CHECK_EQ(out.epoch, 77);
    CHECK_EQ(out.value, -5);
    CHECK_EQ(out.count, 1);
    CHECK_EQ(out.len, RADIOQ_PAYLOAD_MAX);
    CHECK_BYTES(out.payload, e.payload, RADIOQ_PAYLOAD_MAX);
}

static void test_naive(void)
{
    radioq q;
    uint16_t ep;

    radioq_init(&q, NULL, NULL);
    radioq_set_len(&q, 5); /* the paper's experiments */
    for (ep = 1; ep <= 5; ep++) {
        push(&q, 1, 4, ep, 10, 1);
    }
    push(&q, 1, 4, 6, 10, 0); /* full: newcomer dropped */
    CHECK_EQ(radioq_count(&q), 5);
    for (ep = 1; ep <= 5; ep++) {
        CHECK_EQ(pop_epoch(&q), ep);
    }
    CHECK_EQ(radioq_get_stats(&q)->enqueued, 5);
    CHECK_EQ(radioq_get_stats(&q)->dropped, 1);
    CHECK_EQ(radioq_get_stats(&q)->delivered, 5);
    /* slots are reused in any order after interleaved push/pop */
    push(&q, 1, 4, 10, 0, 1);
    push(&q, 1, 4, 11, 0, 1);
    CHECK_EQ(pop_epoch(&q), 10);
    push(&q, 1, 4, 12, 0, 1);
    CHECK_EQ(pop_epoch(&q), 11);
    CHECK_EQ(pop_epoch(&q), 12);
    CHECK_EQ(pop_epoch(&q), 0xFFFF);
}

/* A merge that averages payload[2] and value, as the query engine would average a field. */
typedef struct merge_log {
    int calls;
    int refuse;
} merge_log;

static uint8_t average(void *ctx, radioq_entry *dst, const radioq_entry *src)
{
    merge_log *log = ctx;
    int32_t sum;

    log->calls++;
    if (log->refuse) {
        return 0;
    }
    sum = (int32_t)dst->value * dst->count + (int32_t)src->value * src->count;
    dst->value = (int16_t)(sum / (dst->count + src->count));
    dst->payload[2] = (uint8_t)dst->value;
    return 1;
}

static void test_winavg(void)
{
    merge_log log = {0, 0};
    radioq q;
    radioq_entry out;

    radioq_init(&q, average, &log);
    radioq_set_len(&q, 5); /* the paper's experiments */
    radioq_set_policy(&q, RADIOQ_WINAVG);
    radioq_set_len(&q, 3);
    push(&q, 1, 4, 1, 10, 1);
    push(&q, 2, 4, 2, 99, 1); /* another query: never averaged with query 1 */
    push(&q, 1, 4, 3, 20, 1);
    push(&q, 1, 4, 4, 60, 1); /* full: epochs 1 and 3 (same stream) merge, 4 appended */
    CHECK_EQ(log.calls, 1);
    CHECK_EQ(radioq_count(&q), 3);
    CHECK_EQ(radioq_get_stats(&q)->merged, 1);
    push(&q, 2, 4, 5, 0, 1); /* full again: head (1,4) merges with epoch 4 */
    CHECK_EQ(radioq_get_stats(&q)->merged, 2);
    CHECK_EQ(radioq_pop(&q, &out), 1);
    CHECK_EQ(out.epoch, 1);
    CHECK_EQ(out.count, 3);
    CHECK_EQ(out.value, (15 * 2 + 60) / 3);
    CHECK_EQ(out.payload[2], 30);
    CHECK_EQ(pop_epoch(&q), 2);
    CHECK_EQ(pop_epoch(&q), 5);

    /* refused merges and merge-less queues drop the newcomer */
    log.refuse = 1;
    push(&q, 1, 4, 6, 0, 1);
    push(&q, 1, 4, 7, 0, 1);
    push(&q, 1, 4, 8, 0, 1);
    push(&q, 1, 4, 9, 0, 0);
    CHECK_EQ(radioq_get_stats(&q)->dropped, 1);
    radioq_init(&q, NULL, NULL);
    radioq_set_len(&q, 5); /* the paper's experiments */
    radioq_set_policy(&q, RADIOQ_WINAVG);
    radioq_set_len(&q, 1);
    push(&q, 1, 4, 1, 0, 1);
    push(&q, 1, 4, 2, 0, 0);
}

static void test_delta_order_and_eviction(void)
{
    radioq q;
    radioq_entry out;

    radioq_init(&q, NULL, NULL);
    radioq_set_len(&q, 5); /* the paper's experiments */
    radioq_set_policy(&q, RADIOQ_DELTA);
    radioq_set_len(&q, 3);
    /* nothing delivered yet for node 4: every entry scores RADIOQ_SCORE_MAX, FIFO among them */
    push(&q, 1, 4, 1, 100, 1);
    CHECK_EQ(radioq_peek(&q)->score, RADIOQ_SCORE_MAX);
    CHECK_EQ(pop_epoch(&q), 1); /* last delivered for (1,4): 100 */
    push(&q, 1, 4, 2, 103, 1); /* score 3 */
    push(&q, 1, 4, 3, 150, 1); /* score 50 */
    push(&q, 1, 4, 4, 90, 1);  /* score 10 */
    CHECK_EQ(radioq_peek(&q)->epoch, 3);
    push(&q, 1, 4, 5, 101, 0); /* score 1: lowest, the newcomer is dropped */
    push(&q, 1, 4, 6, 80, 1);  /* score 20: evicts epoch 2 (score 3) */
    CHECK_EQ(radioq_get_stats(&q)->dropped, 1);
    CHECK_EQ(radioq_get_stats(&q)->evicted, 1);
    /* highest first: epoch 3 (50); then rescored against 150: 4 -> 60, 6 -> 70 */
    CHECK_EQ(radioq_pop(&q, &out), 1);
    CHECK_EQ(out.epoch, 3);
    CHECK_EQ(radioq_peek(&q)->epoch, 6);
    CHECK_EQ(radioq_peek(&q)->score, 70);
    CHECK_EQ(pop_epoch(&q), 6); /* against 80: epoch 4 (90) -> 10 */
    CHECK_EQ(radioq_peek(&q)->score, 10);
    CHECK_EQ(pop_epoch(&q), 4);
    CHECK_EQ(radioq_count(&q), 0);
}

static void test_delta_streams_are_separate(void)
{
    radioq q;

    radioq_init(&q, NULL, NULL);
    radioq_set_len(&q, 5); /* the paper's experiments */
    radioq_set_policy(&q, RADIOQ_DELTA);
    push(&q, 1, 4, 1, 0, 1);
    push(&q, 1, 5, 1, 0, 1);
    CHECK_EQ(pop_epoch(&q), 1); /* (1,4) delivered with 0 */
    push(&q, 1, 4, 2, 1000, 1);  /* score 1000 */
    /* (1,5) has no history: RADIOQ_SCORE_MAX beats 1000 */
    CHECK_EQ(radioq_peek(&q)->origin, 5);
    CHECK_EQ(pop_epoch(&q), 1);
    CHECK_EQ(radioq_peek(&q)->origin, 4);
    CHECK_EQ(radioq_peek(&q)->score, 1000);
    /* extreme values do not overflow the score */
    push(&q, 1, 4, 3, -32768, 1);
    CHECK_EQ(radioq_peek(&q)->score, 32768);
    CHECK_EQ(pop_epoch(&q), 3);
    CHECK_EQ(pop_epoch(&q), 2);
}

static void test_delta_history_ring(void)
{
    radioq q;
    uint16_t origin;

    radioq_init(&q, NULL, NULL);
    radioq_set_len(&q, 5); /* the paper's experiments */
    radioq_set_policy(&q, RADIOQ_DELTA);
    for (origin = 1; origin <= RADIOQ_HISTORY + 1; origin++) {
        push(&q, 1, origin, 1, 5, 1);
        pop_epoch(&q);
    }
    /* origin 1 was the oldest remembered stream: forgotten, scores as new */
    push(&q, 1, 1, 2, 5, 1);
    CHECK_EQ(radioq_peek(&q)->score, RADIOQ_SCORE_MAX);
    pop_epoch(&q);
    push(&q, 1, RADIOQ_HISTORY + 1, 2, 5, 1);
    CHECK_EQ(radioq_peek(&q)->score, 0);
}

static void test_set_len_shrinks(void)
{
    radioq q;
    uint16_t ep;

    radioq_init(&q, NULL, NULL);
    radioq_set_len(&q, 5); /* the paper's experiments */
    radioq_set_len(&q, RADIOQ_MAX_LEN);
    for (ep = 1; ep <= RADIOQ_MAX_LEN; ep++) {
        push(&q, 1, 4, ep, 0, 1);
    }
    push(&q, 1, 4, 99, 0, 0);
    CHECK_EQ(radioq_set_len(&q, 2), 1);
    CHECK_EQ(radioq_count(&q), 2);
    CHECK_EQ(radioq_get_stats(&q)->dropped, 1 + RADIOQ_MAX_LEN - 2);
    CHECK_EQ(pop_epoch(&q), 1); /* NAIVE keeps the oldest */
    CHECK_EQ(pop_epoch(&q), 2);

    /* DELTA keeps the highest scores */
    radioq_init(&q, NULL, NULL);
    radioq_set_len(&q, 5); /* the paper's experiments */
    radioq_set_policy(&q, RADIOQ_DELTA);
    push(&q, 1, 4, 1, 0, 1);
    pop_epoch(&q);
    push(&q, 1, 4, 2, 7, 1);
    push(&q, 1, 4, 3, 1, 1);
    push(&q, 1, 4, 4, 9, 1);
    radioq_set_len(&q, 1);
    CHECK_EQ(pop_epoch(&q), 4);
    CHECK_EQ(radioq_count(&q), 0);
}

int main(void)
{
    test_defaults_and_bounds();
    test_naive();
    test_winavg();
    test_delta_order_and_eviction();
    test_delta_streams_are_separate();
    test_delta_history_ring();
    test_set_len_shrinks();
    printf("sizeof(radioq) = %u, sizeof(radioq_entry) = %u\n", (unsigned)sizeof(radioq),
           (unsigned)sizeof(radioq_entry));
    return check_report("test_net_radioq");
}
