# Shared by the Makefiles of guest programs (tests, demo, bench): static
# binaries against libdrm and the patched kernel's uapi headers (KHDR, from
# "make headers_install"), so they see the new client cap exactly as the
# kernel defines it. Set OUT, PROGS and SRCS (sources besides the
# program's own; $(LIB) is this directory, the shared guest library) first.
KHDR ?= $(error KHDR: installed uapi headers of the patched kernel)
LIB := $(dir $(lastword $(MAKEFILE_LIST)))

CC ?= gcc
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -I$(LIB) -I$(KHDR)/drm $(shell pkg-config --cflags libdrm)
LDLIBS = $(shell pkg-config --static --libs libdrm) -lpthread
LDFLAGS += -static

all: $(addprefix $(OUT)/,$(PROGS))

$(OUT)/%: %.c $(SRCS) $(wildcard $(LIB)*.h $(LIB)*.def) $(KHDR)/drm/drm.h
	@mkdir -p $(OUT)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(SRCS) $(LDLIBS)

clean:
	rm -rf $(OUT)

.PHONY: all clean
