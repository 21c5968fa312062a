# sonde — build, test, demo, benchmark.
#
#   make            build build/bin/sonde and the collector library
#   make demo       install what is missing, build, profile examples/demo
#   make check      install what is missing, build, run every test
#   make bench      benchmarks against the plain run and the peers (perf)
#   make install PREFIX=/usr/local  (also the collector API: header,
#                   libsonde_api.a/.so, lib/pkgconfig/sonde.pc)
#
# Switches: ASAN=1 (sanitizers for the analyzer and tests), DEBUG=1 (-O0).

VERSION   := 0.1.0
CC        ?= gcc
PREFIX    ?= /usr/local
B         := build

OPT       := $(if $(DEBUG),-O0,-O2)
WARN      := -Wall -Wextra -Wshadow -Wno-unused-parameter
CFLAGS    ?= $(OPT) -g
BASEFLAGS := -std=gnu11 $(WARN) -Iinclude -DSONDE_VERSION='"$(VERSION)"'
comma     := ,
SANFLAGS  := $(if $(ASAN),-fsanitize=address$(comma)undefined -fno-omit-frame-pointer)

COLLECTOR_SRC := $(wildcard collector/*.c)
LIB_SRC       := $(wildcard lib/*/*.c)
CMD_SRC       := $(wildcard cmd/*.c)
UNIT_SRC      := $(wildcard tests/unit/test_*.c)
FIXTURE_SRC   := $(wildcard tests/fixtures/*.c)
CXXFIXTURE_SRC := $(wildcard tests/fixtures/*.cc)
TOOL_SRC      := $(wildcard tests/tools/*.c)

TRACER_SRC    := $(wildcard tracers/*.c)
COLLECTOR_OBJ := $(COLLECTOR_SRC:%.c=$(B)/obj/%.o)
# The HTML report's page and script (lib/views/report/), built in as C
# arrays (scripts/embed.sh) so that they stay real files.
REPORT_ASSETS := lib/views/report/report.html lib/views/report/report.js lib/views/report/mpi.js
REPORT_GEN    := $(B)/gen/report_assets.c
LIB_OBJ       := $(LIB_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gen/report_assets.o
CMD_OBJ       := $(CMD_SRC:%.c=$(B)/obj/%.o)

SONDE     := $(B)/bin/sonde
COLLECTOR := $(B)/lib/sonde/libsonde_collector.so
LIBSONDE  := $(B)/libsonde.a
# What a program linking libsonde.a links too: elfutils for symbols
# (lib/symbols/symbols.c), libiberty's demangler (static: C++, Rust).
# capstone (lib/symbols/disasm.c) is loaded with dlopen when first needed:
# linked, its relocations made every start of sonde 1.3 ms slower.
LIBSONDE_LIBS := -lm -ldw -lelf -lz -ldeflate -liberty -ldl -lpthread
TRACERS   := $(TRACER_SRC:tracers/%.c=$(B)/lib/sonde/libsonde_%.so)
UNITS     := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
FIXTURES  := $(FIXTURE_SRC:tests/fixtures/%.c=$(B)/fixtures/%) $(B)/fixtures/heapchurn $(CXXFIXTURE_SRC:tests/fixtures/%.cc=$(B)/fixtures/%) \
	     $(B)/fixtures/stdioio_fortify $(B)/fixtures/errnocheck_fortify \
	     $(B)/fixtures/tailcall_clang $(B)/fixtures/tailcall_sep
TOOLS     := $(TOOL_SRC:tests/tools/%.c=$(B)/tests/tools/%)
API_A     := $(B)/lib/libsonde_api.a
API_SO    := $(B)/lib/libsonde_api.so
API_PC    := $(B)/lib/pkgconfig/sonde.pc
# The collector API fixture, linked every way a program may link the API.
API_FIXTURES := $(B)/fixtures/apiuse_pie $(B)/fixtures/apiuse_nopie $(B)/fixtures/apiuse_so

# Header dependencies: each compile of the project's sources writes the
# headers it read into a .d file under $(B)/obj (-MMD; -MP adds an empty
# rule per header, so that a header removed or renamed is no error), and
# the .d files are included at the end, so that a header change rebuilds
# exactly what includes it.  A program compiled and linked in one command
# names its .d file (-MF) and itself as the target (-MT).  Each target
# also depends on its .d file, which an empty rule (at the end) "makes"
# when it is missing: a target built before it had one is built again
# once, and gets one.  The fixtures that include no header of the project
# (tests/fixtures/*.h only) list their headers by hand.
DEPFLAGS  := -MMD -MP
DEPS      := $(COLLECTOR_OBJ:.o=.d) $(filter-out $(B)/obj/gen/%,$(LIB_OBJ:.o=.d)) $(CMD_OBJ:.o=.d) \
	     $(B)/obj/api/sonde_api.d $(TRACER_SRC:%.c=$(B)/obj/%.d) $(TOOL_SRC:%.c=$(B)/obj/%.d) \
	     $(UNIT_SRC:tests/unit/%.c=$(B)/obj/tests/%.d) $(API_FIXTURES:$(B)/%=$(B)/obj/%.d)

.PHONY: all deps check demo bench install clean tests teststates

# sonde merge's MPI helpers (mpi/merge_mpi.c; cmd/merge.c execs the one of
# the launcher that started it): one per MPI implementation whose mpicc is
# installed, so that sonde itself links no MPI.
MPI_IMPLS   := $(foreach i,openmpi mpich,$(if $(shell command -v mpicc.$(i) 2>/dev/null),$(i)))
MERGE_MPI   := $(MPI_IMPLS:%=$(B)/libexec/sonde/sonde-merge-mpi.%)

all: $(SONDE) $(COLLECTOR) $(TRACERS) $(API_A) $(API_SO) $(API_PC) $(MERGE_MPI)

$(B)/libexec/sonde/sonde-merge-mpi.%: mpi/merge_mpi.c lib/reader/expmerge.h $(LIBSONDE)
	@mkdir -p $(dir $@)
	mpicc.$* $(BASEFLAGS) $(CFLAGS) -Ilib $< $(LIBSONDE) -o $@ $(LIBSONDE_LIBS)

deps:
	@sh scripts/deps.sh

# The collector lives in other people's processes: position-independent,
# hidden visibility (only interposers are exported), no sanitizers.
$(B)/obj/collector/%.o: collector/%.c $(B)/obj/collector/%.d
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(DEPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -fno-strict-aliasing -c $< -o $@

$(COLLECTOR): $(COLLECTOR_OBJ) collector/exports.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-z,defs -Wl,--version-script=collector/exports.map -o $@ $(COLLECTOR_OBJ) -ldl -lpthread -lrt

# Tracing libraries (-s, -H, -i): preloaded only when asked for, linked
# against the collector, whose tracing entry points they call.
$(B)/lib/sonde/libsonde_%.so: tracers/%.c $(B)/obj/tracers/%.d $(COLLECTOR)
	@mkdir -p $(B)/obj/tracers
	$(CC) $(BASEFLAGS) $(DEPFLAGS) -MT $@ -MF $(B)/obj/tracers/$*.d $(CFLAGS) -fPIC -fvisibility=hidden \
		-fno-strict-aliasing -shared -Wl,-z,defs -o $@ $< -L$(B)/lib/sonde -lsonde_collector \
		-Wl,-rpath,'$$ORIGIN' -ldl -lpthread


# MPI tracing (-m, -M): libsonde_mpi.so serves Open MPI and MPICH alike
# (tracers/mpi/mpi.c), from wrappers generated out of the one function
# list and each library's mpi.h; built only where both headers are (a
# machine without them builds the rest, and `sonde collect -m on` says the
# library is missing).  The ABI units must reference no symbol of either
# MPI (-z defs checks it: neither is linked).
MPI_OMPI_INC  := /usr/lib/x86_64-linux-gnu/openmpi/include
MPI_MPICH_INC := /usr/include/x86_64-linux-gnu/mpich
HAVE_MPI      := $(and $(wildcard $(MPI_OMPI_INC)/mpi.h),$(wildcard $(MPI_MPICH_INC)/mpi.h))
MPI_LIB       := $(B)/lib/sonde/libsonde_mpi.so
MPI_GEN       := $(B)/gen/mpi_wrap_ompi.c $(B)/gen/mpi_wrap_mpich.c $(B)/gen/mpi_stubs.S
MPI_OBJ       := $(B)/obj/tracers/mpi/mpi.o $(B)/obj/tracers/mpi/state.o $(B)/obj/tracers/mpi/abi_ompi.o \
		 $(B)/obj/tracers/mpi/abi_mpich.o $(B)/obj/tracers/mpi/stubs.o
ifneq ($(HAVE_MPI),)
TRACERS += $(MPI_LIB)
all: $(MPI_LIB)
DEPS += $(B)/obj/tracers/mpi/mpi.d $(B)/obj/tracers/mpi/state.d $(B)/obj/tracers/mpi/abi_ompi.d \
	$(B)/obj/tracers/mpi/abi_mpich.d
endif

$(MPI_GEN) &: tracers/mpi/gen.sh tracers/mpi/gen.awk include/sonde/mpifuncs.h
	sh tracers/mpi/gen.sh '$(CC)' $(B)/gen $(MPI_OMPI_INC) $(MPI_MPICH_INC)

$(B)/obj/tracers/mpi/%.o: tracers/mpi/%.c $(B)/obj/tracers/mpi/%.d
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(DEPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -fno-strict-aliasing -c $< -o $@

$(B)/obj/tracers/mpi/abi_%.o: tracers/mpi/abi.c $(B)/gen/mpi_wrap_%.c $(B)/obj/tracers/mpi/abi_%.d
	@mkdir -p $(dir $@)
	$(CC) -I$(if $(filter ompi,$*),$(MPI_OMPI_INC),$(MPI_MPICH_INC)) -I$(B)/gen $(BASEFLAGS) $(DEPFLAGS) $(CFLAGS) \
		-fPIC -fvisibility=hidden -fno-strict-aliasing -DSM_ABI=$* -DSM_GEN='"mpi_wrap_$*.c"' -c $< -o $@

$(B)/obj/tracers/mpi/stubs.o: $(B)/gen/mpi_stubs.S
	@mkdir -p $(dir $@)
	$(CC) -c $< -o $@

$(MPI_LIB): $(MPI_OBJ) $(COLLECTOR)
	$(CC) -shared -Wl,-z,defs -o $@ $(MPI_OBJ) -L$(B)/lib/sonde -lsonde_collector -Wl,-rpath,'$$ORIGIN' -ldl -lpthread

# The Java agent (-j on, tracers/java/agent.c): a JVMTI agent, built
# against the JDK's jvmti.h where a JDK is installed (scripts/deps.sh
# check installs OpenJDK 17); elsewhere `sonde collect -j on` says the
# library is missing.
JAVA_INC  := $(patsubst %/jvmti.h,%,$(firstword $(wildcard /usr/lib/jvm/java-17-openjdk-amd64/include/jvmti.h \
	     /usr/lib/jvm/java-*-openjdk-*/include/jvmti.h /usr/lib/jvm/*/include/jvmti.h)))
JAVA_LIB  := $(B)/lib/sonde/libsonde_java.so
JAVA_OBJ  := $(B)/obj/tracers/java/agent.o $(B)/obj/tracers/java/frames.o $(B)/obj/tracers/java/code.o
ifneq ($(JAVA_INC),)
TRACERS += $(JAVA_LIB)
all: $(JAVA_LIB)
DEPS += $(JAVA_OBJ:.o=.d)
endif

$(B)/obj/tracers/java/%.o: tracers/java/%.c $(B)/obj/tracers/java/%.d
	@mkdir -p $(dir $@)
	$(CC) -I$(JAVA_INC) -I$(JAVA_INC)/linux $(BASEFLAGS) $(DEPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden \
		-fno-strict-aliasing -c $< -o $@

$(JAVA_LIB): $(JAVA_OBJ) $(COLLECTOR)
	$(CC) -shared -Wl,-z,defs -o $@ $(JAVA_OBJ) -L$(B)/lib/sonde -lsonde_collector -Wl,-rpath,'$$ORIGIN' -ldl -lpthread

# The MPI fixtures (tests/fixtures/mpi/, t77), one per implementation and
# language, built with each implementation's own compiler wrappers where
# all four are installed (scripts/deps.sh check installs them).
MPI_CCS       := $(and $(HAVE_MPI),$(shell command -v mpicc.openmpi),$(shell command -v mpicc.mpich),\
		 $(shell command -v mpifort.openmpi),$(shell command -v mpifort.mpich))
MPI_FIXTURES  := $(B)/fixtures/mpi/mpitraffic_ompi $(B)/fixtures/mpi/mpitraffic_mpich \
		 $(B)/fixtures/mpi/mpitrafficf_ompi $(B)/fixtures/mpi/mpitrafficf_mpich \
		 $(B)/fixtures/mpi/mpiguest_ompi $(B)/fixtures/mpi/mpiguest_mpich
ifneq ($(MPI_CCS),)
tests: $(MPI_FIXTURES)
endif

# (-Wno-stringop-overflow: GCC 12 takes MPICH's MPI_STATUSES_IGNORE for an
# empty array)
$(B)/fixtures/mpi/mpitraffic_%: tests/fixtures/mpi/mpitraffic.c
	@mkdir -p $(dir $@)
	mpicc.$(if $(filter ompi,$*),openmpi,mpich) -std=gnu11 -O2 -g -Wall -Wextra -Wno-stringop-overflow -o $@ $<

$(B)/fixtures/mpi/mpiguest_%: tests/fixtures/mpi/mpiguest.c
	@mkdir -p $(dir $@)
	mpicc.$(if $(filter ompi,$*),openmpi,mpich) -std=gnu11 -O2 -g -Wall -Wextra -o $@ $<

$(B)/fixtures/mpi/mpitrafficf_%: tests/fixtures/mpi/mpitraffic.f90
	@mkdir -p $(dir $@)
	mpifort.$(if $(filter ompi,$*),openmpi,mpich) -O2 -g -J $(dir $@) -o $@ $<
# The collector API library (include/sonde/collector.h): linked into
# programs, static or shared; a no-op without the collector.
$(B)/obj/api/sonde_api.o: api/sonde_api.c $(B)/obj/api/sonde_api.d
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(DEPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(API_A): $(B)/obj/api/sonde_api.o
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(API_SO): $(B)/obj/api/sonde_api.o
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-z,defs -Wl,-soname,libsonde_api.so -o $@ $^ -ldl

$(API_PC): api/sonde.pc.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

$(B)/fixtures/apiuse_pie: tests/fixtures/api/apiuse.c $(B)/obj/fixtures/apiuse_pie.d $(API_A)
	@mkdir -p $(dir $@) $(B)/obj/fixtures
	$(CC) -std=gnu11 $(DEPFLAGS) -MT $@ -MF $(B)/obj/fixtures/$(@F).d -O2 -g -fomit-frame-pointer -Wall -Wextra \
		-Iinclude -fPIE -pie -o $@ $< $(API_A) -ldl

$(B)/fixtures/apiuse_nopie: tests/fixtures/api/apiuse.c $(B)/obj/fixtures/apiuse_nopie.d $(API_A)
	@mkdir -p $(dir $@) $(B)/obj/fixtures
	$(CC) -std=gnu11 $(DEPFLAGS) -MT $@ -MF $(B)/obj/fixtures/$(@F).d -O2 -g -fomit-frame-pointer -Wall -Wextra \
		-Iinclude -fno-pie -no-pie -o $@ $< $(API_A) -ldl

$(B)/fixtures/apiuse_so: tests/fixtures/api/apiuse.c $(B)/obj/fixtures/apiuse_so.d $(API_SO)
	@mkdir -p $(dir $@) $(B)/obj/fixtures
	$(CC) -std=gnu11 $(DEPFLAGS) -MT $@ -MF $(B)/obj/fixtures/$(@F).d -O2 -g -fomit-frame-pointer -Wall -Wextra \
		-Iinclude -o $@ $< -L$(B)/lib -lsonde_api -Wl,-rpath,'$$ORIGIN/../lib'

$(B)/obj/lib/%.o: lib/%.c $(B)/obj/lib/%.d
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(DEPFLAGS) $(CFLAGS) $(SANFLAGS) -Ilib -c $< -o $@

$(B)/obj/cmd/%.o: cmd/%.c $(B)/obj/cmd/%.d
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(DEPFLAGS) $(CFLAGS) $(SANFLAGS) -Ilib -Icmd -c $< -o $@

$(REPORT_GEN): $(REPORT_ASSETS) scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh sonde_report_html lib/views/report/report.html \
		sonde_report_js lib/views/report/report.js \
		sonde_report_mpi_js lib/views/report/mpi.js > $@.tmp && mv $@.tmp $@

$(B)/obj/gen/report_assets.o: $(REPORT_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIBSONDE): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(SONDE): $(CMD_OBJ) $(LIBSONDE)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $(CMD_OBJ) $(LIBSONDE) $(LIBSONDE_LIBS)

# Unit tests.  Those that compile several sources in one command list
# their headers with a pass of their own (-MM; -MMD would keep only the
# last source's).
MULTIDEP = $(CC) $(BASEFLAGS) -Icollector -MM -MP -MT $@ $(filter %.c,$^) > $(B)/obj/tests/$(@F).d

# test_unwind links the collector's unwinder directly.
UNWIND_SRC := collector/unwind.c collector/unwind_tables.c collector/sysgate.c
$(B)/tests/test_unwind: tests/unit/test_unwind.c $(UNWIND_SRC) $(B)/obj/tests/test_unwind.d
	@mkdir -p $(dir $@) $(B)/obj/tests
	$(MULTIDEP)
	$(CC) $(BASEFLAGS) -O2 -g -fomit-frame-pointer -Icollector $< $(UNWIND_SRC) -o $@ -ldl -lpthread

# test_dfile links the collector's data files, to hold up their growth.
DFILE_SRC := collector/dfile.c collector/dfile_write.c collector/xfmt.c collector/sysgate.c
$(B)/tests/test_dfile: tests/unit/test_dfile.c $(DFILE_SRC) $(B)/obj/tests/test_dfile.d
	@mkdir -p $(dir $@) $(B)/obj/tests
	$(MULTIDEP)
	$(CC) $(BASEFLAGS) $(CFLAGS) -Iinclude -Icollector $< $(DFILE_SRC) -o $@ -lpthread

# test_fastclock links the collector's fast clock, to judge it against the kernel's.
FASTCLOCK_SRC := collector/fastclock.c collector/xfmt.c collector/sysgate.c
$(B)/tests/test_fastclock: tests/unit/test_fastclock.c $(FASTCLOCK_SRC) $(B)/obj/tests/test_fastclock.d
	@mkdir -p $(dir $@) $(B)/obj/tests
	$(MULTIDEP)
	$(CC) $(BASEFLAGS) $(CFLAGS) -Iinclude -Icollector $< $(FASTCLOCK_SRC) -o $@

# test_sysgate links the collector's seccomp gate, to judge it against the kernel.
$(B)/tests/test_sysgate: tests/unit/test_sysgate.c collector/sysgate.c $(B)/obj/tests/test_sysgate.d
	@mkdir -p $(dir $@) $(B)/obj/tests
	$(MULTIDEP)
	$(CC) $(BASEFLAGS) $(CFLAGS) -Iinclude -Icollector $< collector/sysgate.c -o $@

# test_stacks compiles the collector's stack interning with small tables.
$(B)/tests/test_stacks: tests/unit/test_stacks.c collector/sysgate.c $(B)/obj/tests/test_stacks.d
	@mkdir -p $(dir $@) $(B)/obj/tests
	$(MULTIDEP)
	$(CC) $(BASEFLAGS) $(CFLAGS) -Iinclude -Icollector $< collector/sysgate.c -o $@ -lpthread

$(B)/tests/tools/%: tests/tools/%.c $(B)/obj/tests/tools/%.d $(LIBSONDE)
	@mkdir -p $(dir $@) $(B)/obj/tests/tools
	$(CC) $(BASEFLAGS) $(DEPFLAGS) -MT $@ -MF $(B)/obj/tests/tools/$*.d $(CFLAGS) $(SANFLAGS) -Ilib $< \
		$(LIBSONDE) -o $@ $(LIBSONDE_LIBS)

$(B)/tests/%: tests/unit/%.c $(B)/obj/tests/%.d $(LIBSONDE)
	@mkdir -p $(dir $@) $(B)/obj/tests
	$(CC) $(BASEFLAGS) $(DEPFLAGS) -MT $@ -MF $(B)/obj/tests/$*.d $(CFLAGS) $(SANFLAGS) -Ilib -Icmd $< \
		$(LIBSONDE) -o $@ $(LIBSONDE_LIBS)

# Fixtures: programs with known behaviour, built as users build them:
# -O2, no frame pointers.
$(B)/fixtures/%: tests/fixtures/%.c tests/fixtures/burner.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -o $@ $< -lpthread -lm -ldl

# syncwait bound at load (-z now, as Debian's hardened programs are): a
# first call goes straight to the interposer, not through the dynamic
# linker's lookup first (tens of microseconds inside the fixture's timing
# of the call, outside the tracer's: t30 bounds each wait from below).
$(B)/fixtures/syncwait: tests/fixtures/syncwait.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -Wl,-z,now -o $@ $< -lpthread

# The stdio fixture as Debian builds programs: the fortified calls
# (__printf_chk, __fgets_chk, ...) instead of the plain ones.
$(B)/fixtures/stdioio_fortify: tests/fixtures/stdioio.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -D_FORTIFY_SOURCE=2 -Wall -Wextra -o $@ $<

$(B)/fixtures/%: tests/fixtures/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=gnu++17 -O2 -g -fomit-frame-pointer -Wall -Wextra -o $@ $< -lpthread

# errnocheck with a library whose constructor calls the interposers before
# the collector's runs; and as Debian builds programs (the fortified stdio).
$(B)/fixtures/liberrnoearly.so: tests/fixtures/lib/errnoearly.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fPIC -shared -Wall -Wextra -o $@ $<

$(B)/fixtures/errnocheck: tests/fixtures/errnocheck.c $(B)/fixtures/liberrnoearly.so
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -o $@ $< -L$(B)/fixtures -lerrnoearly \
		-Wl,-rpath,'$$ORIGIN' -lpthread -ldl

$(B)/fixtures/errnocheck_fortify: tests/fixtures/errnocheck.c $(B)/fixtures/liberrnoearly.so
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -D_FORTIFY_SOURCE=2 -Wall -Wextra -o $@ $< \
		-L$(B)/fixtures -lerrnoearly -Wl,-rpath,'$$ORIGIN' -lpthread -ldl

$(B)/fixtures/libearly.so: tests/fixtures/lib/early_lib.c tests/fixtures/burner.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fPIC -shared -o $@ $< -lpthread

$(B)/fixtures/early: tests/fixtures/early.c $(B)/fixtures/libearly.so
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -o $@ $< -L$(B)/fixtures -learly -Wl,-rpath,'$$ORIGIN' -lpthread

# The two libraries of the dlclose/dlopen address reuse fixture: the same
# code (tests/fixtures/lib/dlreuse_lib.h) at the same offsets.
$(B)/fixtures/libdlreuse_%.so: tests/fixtures/lib/dlreuse_%.c tests/fixtures/lib/dlreuse_lib.h tests/fixtures/burner.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -fPIC -shared -o $@ $<

$(B)/fixtures/dlreuse: $(B)/fixtures/libdlreuse_a.so $(B)/fixtures/libdlreuse_b.so

# The tail-call fixture (t65): -O2 -g as users build, without
# -fno-optimize-sibling-calls, by gcc and by clang (when installed), and
# stripped with its DWARF in a separate file (.gnu_debuglink); its tail
# call through a PLT stub lands in libtailcall_lib.so.
CLANG ?= clang
TAILCALL_DEPS := tests/fixtures/tailcall.c tests/fixtures/lib/tailcall_lib.h tests/fixtures/burner.h \
		 $(B)/fixtures/libtailcall_lib.so
TAILCALL_LINK := -L$(B)/fixtures -ltailcall_lib -Wl,-rpath,'$$ORIGIN'

$(B)/fixtures/libtailcall_lib.so: tests/fixtures/lib/tailcall_lib.c tests/fixtures/lib/tailcall_lib.h tests/fixtures/burner.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -fPIC -shared -o $@ $<

$(B)/fixtures/tailcall: $(TAILCALL_DEPS)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -o $@ $< $(TAILCALL_LINK)

$(B)/fixtures/tailcall_clang: $(TAILCALL_DEPS)
	@if command -v $(CLANG) >/dev/null 2>&1; then \
		echo "$(CLANG) -std=gnu11 -O2 -g -fomit-frame-pointer -o $@ $<"; \
		$(CLANG) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -o $@ $< $(TAILCALL_LINK); \
	else echo "$(CLANG) not found: $@ not built (t65 says so)"; fi

$(B)/fixtures/tailcall_sep: $(TAILCALL_DEPS)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -o $@ $< $(TAILCALL_LINK)
	objcopy --only-keep-debug $@ $@.debug
	objcopy --strip-all --add-gnu-debuglink=$@.debug $@

# Names as their languages write them (tests/t89-names.sh): a Fortran
# program (gfortran, as a user builds it and with internal procedures out
# of line), a Rust one in both manglings (Debian's rustc, or the one on
# PATH) and a C++ one; each where its compiler is (the test says when one
# is not).
NAMES_FC    := $(shell command -v gfortran 2>/dev/null)
NAMES_RUSTC := $(firstword $(wildcard /usr/bin/rustc) $(shell command -v rustc 2>/dev/null))
NAMES_FIXTURES := $(B)/fixtures/names/cxxnames \
	$(if $(NAMES_FC),$(B)/fixtures/names/physics $(B)/fixtures/names/physics_noinline) \
	$(if $(NAMES_RUSTC),$(B)/fixtures/names/rnames_legacy $(B)/fixtures/names/rnames_v0)
tests: $(NAMES_FIXTURES)

$(B)/fixtures/names/cxxnames: tests/fixtures/names/cxxnames.cc
	@mkdir -p $(dir $@)
	$(CXX) -O2 -g -Wall -Wextra -o $@ $<

$(B)/fixtures/names/physics: tests/fixtures/names/physics.f90
	@mkdir -p $(dir $@)
	$(NAMES_FC) -O2 -g -J $(dir $@) -o $@ $<

$(B)/fixtures/names/physics_noinline: tests/fixtures/names/physics.f90
	@mkdir -p $(dir $@)
	$(NAMES_FC) -O2 -g -fno-inline -J $(dir $@) -o $@ $<

$(B)/fixtures/names/rnames_legacy: tests/fixtures/names/rnames.rs
	@mkdir -p $(dir $@)
	$(NAMES_RUSTC) -O -g -o $@ $<

$(B)/fixtures/names/rnames_v0: tests/fixtures/names/rnames.rs
	@mkdir -p $(dir $@)
	$(NAMES_RUSTC) -O -g -C symbol-mangling-version=v0 -o $@ $<

# OpenMP's states (tests/t78-omp-states.sh): the fixture with its truth
# (tests/fixtures/omp/ompstates.c) built for libgomp by gcc and for libomp
# by clang (only where clang and libomp's omp.h are installed: the test
# says when they are not), and a program with its own OMPT tool.
CLANG_OMP := $(shell command -v $(CLANG) >/dev/null 2>&1 && echo '\#include <omp.h>' | \
		$(CLANG) -fopenmp -x c -E - >/dev/null 2>&1 && echo yes)
OMP_FIXTURES := $(B)/fixtures/ompstates_gcc $(B)/fixtures/ompmany_gcc \
		$(if $(CLANG_OMP),$(B)/fixtures/ompstates_clang $(B)/fixtures/ompmany_clang $(B)/fixtures/omptooluse_clang)
OMP_CFLAGS := -std=gnu11 -O2 -g -fno-omit-frame-pointer -Wall -Wextra -fopenmp

# each OpenMP fixture built by both compilers (libgomp, libomp)
$(B)/fixtures/omp%_gcc: tests/fixtures/omp/omp%.c
	@mkdir -p $(dir $@)
	$(CC) $(OMP_CFLAGS) -o $@ $<

$(B)/fixtures/omp%_clang: tests/fixtures/omp/omp%.c
	@mkdir -p $(dir $@)
	$(CLANG) $(OMP_CFLAGS) -o $@ $<

$(B)/fixtures/libomptool.so: tests/fixtures/omp/omptool.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -fPIC -shared -o $@ $<

$(B)/fixtures/omptooluse_clang: tests/fixtures/omp/omptooluse.c $(B)/fixtures/libomptool.so
	$(CLANG) $(OMP_CFLAGS) -o $@ $< -L$(B)/fixtures -lomptool -Wl,-rpath,'$$ORIGIN'

# t55's heap churn is the heap benchmark's program itself.
$(B)/fixtures/heapchurn: bench/heapbench.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -o $@ $<

$(B)/fixtures/static_%: tests/fixtures/static_%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -static -o $@ $<

# The fixtures of the sampling handler's hooks (include/sonde/hooks.h):
# their hooks in objects of their own, which t00 checks as the handler's
# files (they run in it).  hookstate's provider gives the thread state
# that only the tests' build has (SONDE_TEST_STATES, below).
HOOK_HDRS := include/sonde/hooks.h include/sonde/states.h include/sonde/format.h include/sonde/kinds.h
HOOK_OBJS := $(B)/obj/fixtures/hookstate_hooks.o $(B)/obj/fixtures/hookattack_hooks.o

$(B)/obj/fixtures/hookstate_hooks.o: tests/fixtures/lib/hookstate_hooks.c tests/fixtures/lib/hookstate.h $(HOOK_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Iinclude -DSONDE_TEST_STATES -c $< -o $@

$(B)/obj/fixtures/hookattack_hooks.o: tests/fixtures/lib/hookattack_hooks.c tests/fixtures/lib/hookattack.h $(HOOK_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Iinclude -c $< -o $@

$(B)/fixtures/hookstate: tests/fixtures/hookstate.c $(B)/obj/fixtures/hookstate_hooks.o tests/fixtures/burner.h \
			 tests/fixtures/lib/hookstate.h $(HOOK_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -Iinclude -DSONDE_TEST_STATES -o $@ $< \
		$(B)/obj/fixtures/hookstate_hooks.o -lpthread

$(B)/fixtures/hookattack: tests/fixtures/hookattack.c $(B)/obj/fixtures/hookattack_hooks.o tests/fixtures/burner.h \
			  tests/fixtures/lib/hookattack.h $(HOOK_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -Iinclude -o $@ $< \
		$(B)/obj/fixtures/hookattack_hooks.o -lpthread

# The tests' build: sonde and the collector with one more thread state
# (include/sonde/states.h, SONDE_TEST_STATES), in $(B)/teststates, so
# that t46 records a state a state provider gives and reads it back as a
# row of the table, and t74 reads test_frames' experiment in that state
# (with this build's test_frames too).  Only what changed is rebuilt (its
# own objects and header dependencies).
TEST_STATES_B := $(B)/teststates
teststates:
	@$(MAKE) --no-print-directory B=$(TEST_STATES_B) CFLAGS='$(CFLAGS) -DSONDE_TEST_STATES' \
		$(TEST_STATES_B)/bin/sonde $(TEST_STATES_B)/lib/sonde/libsonde_collector.so \
		$(TEST_STATES_B)/tests/test_frames

tests: all $(UNITS) $(FIXTURES) $(API_FIXTURES) $(TOOLS) $(HOOK_OBJS) $(OMP_FIXTURES) teststates

# check and bench also install the tests' real readers (scripts/deps.sh
# check); demo only what it builds with.
check:
	@sh scripts/deps.sh check
	@$(MAKE) --no-print-directory tests
	@sh tests/run.sh

demo: deps
	@$(MAKE) --no-print-directory all $(B)/examples/demo
	@sh examples/demo.sh

$(B)/examples/demo: examples/demo.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -o $@ $< -lpthread -lm

bench:
	@sh scripts/deps.sh bench
	@$(MAKE) --no-print-directory tests
	@sh bench/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/sonde $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(SONDE) $(DESTDIR)$(PREFIX)/bin/sonde
	install -m 755 $(COLLECTOR) $(DESTDIR)$(PREFIX)/lib/sonde/libsonde_collector.so
	for t in $(TRACERS); do install -m 755 $$t $(DESTDIR)$(PREFIX)/lib/sonde/; done
	for t in $(MERGE_MPI); do install -D -m 755 $$t $(DESTDIR)$(PREFIX)/libexec/sonde/$$(basename $$t); done
	install -m 644 doc/sonde.1 $(DESTDIR)$(PREFIX)/share/man/man1/sonde.1
	install -d $(DESTDIR)$(PREFIX)/include/sonde $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/sonde/collector.h $(DESTDIR)$(PREFIX)/include/sonde/collector.h
	install -m 644 $(API_A) $(DESTDIR)$(PREFIX)/lib/libsonde_api.a
	install -m 755 $(API_SO) $(DESTDIR)$(PREFIX)/lib/libsonde_api.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' api/sonde.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/sonde.pc

clean:
	rm -rf $(B)

# The header dependencies (DEPFLAGS above).
$(DEPS): ;
include $(wildcard $(DEPS))
