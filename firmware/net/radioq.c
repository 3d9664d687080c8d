#include "radioq.h"

#include <string.h>

typedef char radioq_slots_fit_the_used_bitmask[RADIOQ_MAX_LEN <= 8u ? 1 : -1];

#define NOT_FOUND 0xFFu

void radioq_init(radioq *q, radioq_merge_fn merge, void *merge_ctx)
{
    memset(q, 0, sizeof(*q));
    q->merge = merge;
    q->merge_ctx = merge_ctx;
    q->len = RADIOQ_DEFAULT_LEN;
    q->policy = RADIOQ_NAIVE;
}

uint8_t radioq_set_policy(radioq *q, uint8_t policy)
{
    if (policy > RADIOQ_DELTA) {
        return 0;
    }
    q->policy = policy;
    return 1;
}

uint8_t radioq_policy_of(const radioq *q)
{
    return q->policy;
}

uint8_t radioq_len(const radioq *q)
{
    return q->len;
}

uint8_t radioq_count(const radioq *q)
{
    return q->count;
}

const radioq_stats *radioq_get_stats(const radioq *q)
{
    return &q->stats;
}

static uint8_t history_find(const radioq *q, uint8_t qid, uint16_t origin)
{
    uint8_t i;

    for (i = 0; i < q->hist_count; i++) {
        if (q->hist_qid[i] == qid && q->hist_origin[i] == origin) {
            return i;
        }
    }
    return NOT_FOUND;
}

/* |value - last delivered value|; RADIOQ_SCORE_MAX is reserved for "nothing delivered yet". */
static uint16_t score_against(int16_t value, int16_t last)
{
    int32_t d = (int32_t)value - (int32_t)last;

    if (d < 0) {
        d = -d;
    }
    return d >= (int32_t)RADIOQ_SCORE_MAX ? (uint16_t)(RADIOQ_SCORE_MAX - 1u) : (uint16_t)d;
}

static uint16_t score_of(const radioq *q, const radioq_entry *e)
{
    uint8_t h = history_find(q, e->qid, e->origin);

    return h == NOT_FOUND ? RADIOQ_SCORE_MAX : score_against(e->value, q->hist_value[h]);
}

/* Remember what was delivered for this stream and rescore its queued entries. */
static void history_update(radioq *q, const radioq_entry *sent)
{
    radioq_entry *e;
    uint8_t h = history_find(q, sent->qid, sent->origin);
    uint8_t i;

    if (h == NOT_FOUND) {
        h = q->hist_head;
        q->hist_head = (uint8_t)((q->hist_head + 1u) % RADIOQ_HISTORY);
        if (q->hist_count < RADIOQ_HISTORY) {
            q->hist_count++;
        }
        q->hist_qid[h] = sent->qid;
        q->hist_origin[h] = sent->origin;
    }
    q->hist_value[h] = sent->value;
    for (i = 0; i < q->count; i++) {
        e = &q->slot[q->order[i]];
        if (e->qid == sent->qid && e->origin == sent->origin) {
            e->score = score_against(e->value, sent->value);
        }
    }
}

static void remove_at(radioq *q, uint8_t pos)
{
    q->used = (uint8_t)(q->used & ~(1u << q->order[pos]));
    memmove(&q->order[pos], &q->order[pos + 1], (size_t)(q->count - pos - 1u));
    q->count--;
}

static void append(radioq *q, const radioq_entry *e)
{
    uint8_t s = 0;

    while (q->used & (1u << s)) {
        s++;
    }
    q->slot[s] = *e;
    q->used = (uint8_t)(q->used | 1u << s);
    q->order[q->count++] = s;
}

/* Highest score first; the oldest wins ties, so equal scores stay FIFO. */
static uint8_t best_pos(const radioq *q)
{
    uint8_t best = 0, i;

    for (i = 1; i < q->count; i++) {
        if (q->slot[q->order[i]].score > q->slot[q->order[best]].score) {
            best = i;
        }
    }
    return best;
}

/* Lowest score; the oldest goes first on ties (it has been superseded longest). */
static uint8_t lowest_pos(const radioq *q)
{
    uint8_t low = 0, i;

    for (i = 1; i < q->count; i++) {
        if (q->slot[q->order[i]].score < q->slot[q->order[low]].score) {
            low = i;
        }
    }
    return low;
}

static uint8_t next_pos(const radioq *q)
{
    uint8_t i;
    for (i = 0; i < q->count; i++) {
        if (q->slot[q->order[i]].urgent) {
            return i;
        }
    }
    return q->policy == RADIOQ_DELTA ? best_pos(q) : 0;
}

/* WINAVG: fold the oldest entry's next same-stream entry into it. */
static uint8_t merge_head(radioq *q)
{
    radioq_entry *head;
    const radioq_entry *other;
    uint8_t j;
    unsigned total;

    if (!q->merge || q->count < 2) {
        return 0;
    }
    head = &q->slot[q->order[0]];
    for (j = 1; j < q->count; j++) {
        other = &q->slot[q->order[j]];
        if (other->qid == head->qid && other->origin == head->origin) {
            break;
        }
    }
    if (j == q->count || !q->merge(q->merge_ctx, head, other)) {
        return 0;
    }
    total = (unsigned)head->count + other->count;
    head->count = total > 0xFFu ? 0xFFu : (uint8_t)total;
    head->score = score_of(q, head);
    remove_at(q, j);
    return 1;
}

uint8_t radioq_push(radioq *q, const radioq_entry *e)
{
    radioq_entry in;
    uint8_t low;

    if (e->len > RADIOQ_PAYLOAD_MAX) {
        q->stats.dropped++;
        return 0;
    }
    in = *e;
    if (in.count == 0) {
        in.count = 1;
    }
    in.score = score_of(q, &in);

    if (q->count >= q->len) {
        switch (q->policy) {
        case RADIOQ_WINAVG:
            if (!merge_head(q)) {
                q->stats.dropped++;
                return 0;
            }
            q->stats.merged++;
            break;
        case RADIOQ_DELTA:
            low = lowest_pos(q);
            if (in.score <= q->slot[q->order[low]].score) {
                q->stats.dropped++;
                return 0;
            }
            remove_at(q, low);
            q->stats.evicted++;
            break;
        default:
            q->stats.dropped++;
            return 0;
        }
    }
    append(q, &in);
    q->stats.enqueued++;
    return 1;
}

const radioq_entry *radioq_peek(const radioq *q)
{
    return q->count ? &q->slot[q->order[next_pos(q)]] : NULL;
}

radioq_entry *radioq_newest(radioq *q)
{
    return q->count ? &q->slot[q->order[q->count - 1u]] : NULL;
}

uint8_t radioq_pop(radioq *q, radioq_entry *out)
{
    uint8_t pos;

    if (!q->count) {
        return 0;
    }
    pos = next_pos(q);
    *out = q->slot[q->order[pos]];
    remove_at(q, pos);
    q->stats.delivered++;
    history_update(q, out);
    return 1;
}

uint8_t radioq_set_len(radioq *q, uint8_t len)
{
    if (len < 1u || len > RADIOQ_MAX_LEN) {
        return 0;
    }
    q->len = len;
    while (q->count > len) {
        remove_at(q, q->policy == RADIOQ_DELTA ? lowest_pos(q) : (uint8_t)(q->count - 1u));
        q->stats.dropped++;
    }
    return 1;
}
