/* A small streaming JSON writer for the in-process report (no dependency:
 * it lives inside the preloaded library). Commas are placed automatically. */
#ifndef TRLAT_JSON_H
#define TRLAT_JSON_H

#include <stdint.h>
#include <stdio.h>

struct trlat_json {
    FILE *out;
    int depth;
    unsigned char need_comma[32];
};

void trlat_json_begin(struct trlat_json *j, FILE *out);
void trlat_json_obj(struct trlat_json *j, const char *key); /* key NULL inside arrays */
void trlat_json_arr(struct trlat_json *j, const char *key);
void trlat_json_end_obj(struct trlat_json *j);
void trlat_json_end_arr(struct trlat_json *j);
void trlat_json_str(struct trlat_json *j, const char *key, const char *v); /* v NULL: null */
void trlat_json_u64(struct trlat_json *j, const char *key, uint64_t v);
void trlat_json_i64(struct trlat_json *j, const char *key, int64_t v);
void trlat_json_bool(struct trlat_json *j, const char *key, int v);
void trlat_json_null(struct trlat_json *j, const char *key);

#endif
