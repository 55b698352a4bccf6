/* SPDX-License-Identifier: MIT */
/* core/trace/flight.h - the flight recorder's signal (flight.c; <blitz/trace.h>). */
#ifndef BLITZ_CORE_TRACE_FLIGHT_H
#define BLITZ_CORE_TRACE_FLIGHT_H

int flight_signal_install(int sig);

#endif
