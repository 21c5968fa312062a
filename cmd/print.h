/*
 * print.h: the parts of `sonde print` (cmd/print*.c).
 */
#ifndef SONDE_CMD_PRINT_H
#define SONDE_CMD_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "reader/experiment.h"

enum print_dump_kind { DUMP_PROFILE, DUMP_STACKS, DUMP_OVERVIEW, DUMP_OBJECTS, DUMP_SYNC, DUMP_HEAP, DUMP_IO };

/* -header: the summary of one experiment (print_header.c). */
void print_header(FILE *f, const struct sonde_exp *exp);

/* -header with -printmode csv ("key,value" lines, dotted keys) or json
 * (one document on one line), every number unrounded. */
void print_header_data(FILE *f, const struct sonde_exp *exp, bool json);

/* -dump KIND; returns 0, or 1 when memory ran out (said on stderr). */
int print_dump(FILE *f, const struct sonde_exp *exp, enum print_dump_kind kind);

#endif
