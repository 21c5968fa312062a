/*
 * The demo program profiled by `make demo`: a small word-frequency job with
 * three distinct costs — generating text, hashing words into a table, and
 * sorting the table — plus a helper thread that checksums the text.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS 400000
#define TABLE 65536

struct entry {
	char word[16];
	unsigned count;
};

static struct entry table[TABLE];
static char text[WORDS * 8];

__attribute__((noinline)) static void make_text(unsigned seed)
{
	char *p = text;
	for (int i = 0; i < WORDS; i++) {
		int len = 3 + (int)((seed >> 16) % 4);
		for (int k = 0; k < len; k++) {
			seed = seed * 1103515245u + 12345u;
			*p++ = (char)('a' + (seed >> 16) % 6);
		}
		*p++ = ' ';
	}
	*p = 0;
}

__attribute__((noinline)) static unsigned hash_word(const char *w, int n)
{
	unsigned h = 2166136261u;
	for (int r = 0; r < 8; r++) /* a deliberately slow hash */
		for (int i = 0; i < n; i++)
			h = (h ^ (unsigned char)w[i]) * 16777619u;
	return h;
}

__attribute__((noinline)) static void count_words(void)
{
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, ' ');
		int n = (int)(e - p);
		unsigned h = hash_word(p, n) & (TABLE - 1);
		while (table[h].count && strncmp(table[h].word, p, (size_t)n))
			h = (h + 1) & (TABLE - 1);
		memcpy(table[h].word, p, (size_t)n);
		table[h].count++;
		p = e + 1;
	}
}

static int by_count(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->word, y->word);
}

__attribute__((noinline)) static void sort_table(void)
{
	static struct entry copy[TABLE];
	for (int r = 0; r < 20; r++) {
		memcpy(copy, table, sizeof copy);
		qsort(copy, TABLE, sizeof copy[0], by_count);
	}
	printf("most frequent: %s (%u)\n", copy[0].word, copy[0].count);
}

static void *checksum(void *arg)
{
	(void)arg;
	uint64_t sum = 0;
	for (int r = 0; r < 60; r++)
		for (size_t i = 0; i < sizeof text; i++)
			sum = sum * 31 + (unsigned char)text[i];
	printf("checksum %016llx\n", (unsigned long long)sum);
	return NULL;
}

int main(void)
{
	for (int round = 0; round < 3; round++) {
		memset(table, 0, sizeof table);
		make_text(42u + (unsigned)round);
		pthread_t t;
		pthread_create(&t, NULL, checksum, NULL);
		count_words();
		sort_table();
		pthread_join(t, NULL);
	}
	return 0;
}
