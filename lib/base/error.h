/*
 * error: what kind of failure a library function had, so that a command
 * decides its exit status from a code, never by matching the message.
 *
 * Functions that report a code return 0 on success, else the negated code
 * with a one-line message in their err buffer:
 *
 *	int r = sonde_view_functions(f, m, &o, err, sizeof err);
 *	if (r == -SONDE_ERR_NOT_RECORDED) ...	(the user's mistake)
 *
 * -1 is SONDE_ERR_FAILED, so a function that returns 0 or -1 already
 * follows this convention; the other codes are returned where they are
 * known.  The codes say whose problem it is, not what went wrong in
 * detail (the message does that).
 */
#ifndef SONDE_ERROR_H
#define SONDE_ERROR_H

enum sonde_err {
	/* Anything else: out of memory, a write error, data that could not
	 * be read. */
	SONDE_ERR_FAILED = 1,
	/* A metric (of -metrics or -sort) that the experiment did not
	 * record. */
	SONDE_ERR_NOT_RECORDED,
	/* A name (a function, a source file) that names nothing with data. */
	SONDE_ERR_NO_MATCH,
};

#endif
