/*
 * view_common: the pieces of lib/views/view.c that other views of metrics
 * (lib/views/view_source.c, view_statistics.c) share: a metric spec resolved
 * against a model, its column groups, the JSON heading of a view and its
 * end.  Internal to lib/views/view*.c.
 */
#ifndef SONDE_VIEW_COMMON_H
#define SONDE_VIEW_COMMON_H

#include "views/view.h"
#include "views/view_table.h"

/* The spec's items resolved against a model. */
struct cols {
	const struct sonde_model *m;
	int n;
	const struct sonde_mitem *it[SONDE_MSPEC_MAX];
	int mi[SONDE_MSPEC_MAX];
	int sort_mi; /* the sort metric's index, -1 when sorting by name */
};

/* Resolves the items of the flavours in `flavors` (NULL: all) of o's
 * spec against m; 0, or -SONDE_ERR_NOT_RECORDED with "metric 'x' is not
 * recorded ..." in err. */
int vw_resolve(struct cols *c, const struct sonde_model *m, const struct sonde_view_opts *o,
	       const char *flavors, char *err, size_t errlen);

/* -SONDE_ERR_NOT_RECORDED with "WHAT 'NAME' is not recorded in this
 * experiment" in err, and for a derived metric the parts it needs. */
int vw_not_recorded(const char *what, const char *name, char *err, size_t errlen);

/* Sets cell s of r to metric mi's value in a row's vector v: v[mi], or a
 * derived metric's ratio (a double). */
void vw_set_metric(struct vt_row *r, int s, const struct sonde_model *m, int mi, const int64_t *v);

/* Column groups for the items of c (first[k]: each item's first
 * subcolumn); the sort column is marked (markfl: see view.c). */
int vw_item_columns(struct vt_table *t, const struct sonde_model *m, const struct cols *c,
		    const struct sonde_view_opts *o, int *first, char markfl);

/* Fills a row's item columns from its exclusive and inclusive vectors,
 * percentages of total. */
void vw_fill_items(struct vt_row *r, const struct vt_table *t, const struct cols *c,
		   const int *first, const int64_t *excl, const int64_t *incl,
		   const int64_t *total);

/* An index view's metrics (-threads, -cpus, -seconds): each of c's once
 * whatever its flavours (an index object's exclusive and inclusive totals
 * are the same), with the visibilities of its items. */
struct icols {
	int n;
	int mi[SONDE_MSPEC_MAX];
	unsigned vis[SONDE_MSPEC_MAX];
};
void vw_index_cols(struct icols *a, const struct cols *c);

/* Their column groups (first[k]: each metric's first subcolumn), the sort
 * metric's marked; -1 out of memory. */
int vw_index_fields(struct vt_table *t, const struct sonde_model *m, const struct icols *a, int sort_mi,
		    int *first);

/* An index row's cells: v's metrics, percentages of total. */
void vw_index_values(struct vt_row *r, const struct sonde_model *m, const struct icols *a, const int *first,
		     const int64_t *v, const int64_t *total);

/* Opens a view's document: json {"view":VIEW,"metrics":SPEC,"sort":KEY
 * (em_end_doc closes it); nothing in text and csv. */
void vw_begin(struct sonde_emit *e, const char *view, const struct sonde_view_opts *o);

/* The table after the heading a view writes itself: text column headers
 * and rows; csv; or json ,"rows":[...]} closing the document that
 * vw_begin (or the view) opened. */
void vw_table_body(struct sonde_emit *e, struct vt_table *t);

/* A sorted list: text "TITLE sorted by metric: SORT" over the table; csv;
 * json {"view":VIEW,...,"rows":[...]}. */
void vw_list_out(struct sonde_emit *e, struct vt_table *t, const struct sonde_view_opts *o, const char *view,
		 const char *title);

/* 0, or -1 with "error writing the output" when f has an error. */
int vw_finish(FILE *f, char *err, size_t errlen);

#endif
