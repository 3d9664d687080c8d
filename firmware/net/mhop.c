#include "mhop.h"

#include "le16.h"

void tos_header_pack(const tos_header *h, uint8_t out[TOS_HEADER_LEN])
{
    le16_put(&out[0], h->addr);
    out[2] = h->type;
    out[3] = h->group;
    out[4] = h->length;
}

void tos_header_unpack(tos_header *h, const uint8_t in[TOS_HEADER_LEN])
{
    h->addr = le16_get(&in[0]);
    h->type = in[2];
    h->group = in[3];
    h->length = in[4];
}

uint8_t tos_msg_parse(tos_header *h, const uint8_t *msg, uint16_t len)
{
    uint8_t length;

    if (len < TOS_HEADER_LEN) {
        return 0;
    }
    length = msg[4];
    if (length > TOS_DATA_LENGTH || (uint16_t)(TOS_HEADER_LEN + length) > len) {
        return 0;
    }
    tos_header_unpack(h, msg);
    return 1;
}

void mhop_header_pack(const mhop_header *h, uint8_t out[MHOP_HEADER_LEN])
{
    le16_put(&out[0], h->sourceaddr);
    le16_put(&out[2], h->originaddr);
    le16_put(&out[4], (uint16_t)h->seqno);
    out[6] = h->hopcount;
}

void mhop_header_unpack(mhop_header *h, const uint8_t in[MHOP_HEADER_LEN])
{
    h->sourceaddr = le16_get(&in[0]);
    h->originaddr = le16_get(&in[2]);
    h->seqno = le16_get_i(&in[4]);
    h->hopcount = in[6];
}
