#ifndef SONDE_COMMANDS_H
#define SONDE_COMMANDS_H

#ifndef SONDE_VERSION
#define SONDE_VERSION "0.1.0"
#endif

/* Each returns the process exit status; argv[0] is the command's name. */
int cmd_agg(int argc, char **argv);
int cmd_archive(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_print(int argc, char **argv);

#endif
