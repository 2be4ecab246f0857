/* Formatting shared by the subcommands: human units, aligned text tables,
 * JSON output. */
#ifndef TRLAT_CLI_FMT_H
#define TRLAT_CLI_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_FMT_LEN 40

/* Duration with three significant digits: "850 ns", "70.2 µs", "1.23 ms",
 * "2.50 s". NAN prints "-". Returns buf. */
char *cli_fmt_ns(char buf[CLI_FMT_LEN], double ns);
/* 1234567 -> "1,234,567". */
char *cli_fmt_count(char buf[CLI_FMT_LEN], uint64_t n);
/* 0.412 -> "41.2%"; NAN prints "-". */
char *cli_fmt_pct(char buf[CLI_FMT_LEN], double frac);
/* A signed relative change: +398.6%, -12.0%. */
char *cli_fmt_change(char buf[CLI_FMT_LEN], double frac);

/* Columns of a text table: the widest cell sets each column's width;
 * align holds one 'l' or 'r' per column. The last column is not padded. */
struct cli_table {
    const char *align;
    size_t ncols, ncells, cap;
    char **cells;
};

void cli_table_init(struct cli_table *t, const char *align);
/* Appends a copy of the next cell (row after row), control characters
 * replaced; NULL prints as "-". */
void cli_table_add(struct cli_table *t, const char *cell);
/* Appends a whole row of ncols cells. */
void cli_table_row(struct cli_table *t, ...);
/* Appends a row printed as a horizontal rule. */
void cli_table_rule(struct cli_table *t);
/* Whether cell i belongs to a rule row. */
int cli_table_is_rule(const struct cli_table *t, size_t i);
void cli_table_print(const struct cli_table *t, FILE *f, const char *indent);
void cli_table_free(struct cli_table *t);

/* s with control characters written as '?', so a name stays on its line. */
void cli_put_text(FILE *f, const char *s);

/* Columns a UTF-8 string takes on a terminal (one per code point). */
size_t cli_text_width(const char *s);

/* s as a JSON string literal, quotes included. */
void cli_json_str(FILE *f, const char *s);
/* ns as microseconds with exact decimals: 1234567 -> 1234.567. */
void cli_json_us(FILE *f, uint64_t ns);

/* Writes a jansson value readably: objects one member a line, arrays of
 * objects one element a line, everything deeper compact. Returns -1 on a
 * write error. */
int cli_json_dump(FILE *f, const void *json);
/* The same, but the member named streamed is written by write(f, ctx)
 * (its value in json is not used): an array too large to hold, written
 * an item at a time with cli_json_item (*n counts the items written) and
 * closed with cli_json_items_end, as cli_json_dump lays one out. */
int cli_json_dump_with(FILE *f, const void *json, const char *streamed, int (*write)(FILE *, void *), void *ctx);
int cli_json_item(FILE *f, const void *item, size_t *n);
void cli_json_items_end(FILE *f, size_t n);

#endif
