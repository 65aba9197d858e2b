/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MUSTER_ASAN is 1 in AddressSanitizer builds (gcc's __SANITIZE_ADDRESS__ or clang's
 * __has_feature), else 0: for the few places that trade checking for speed (allocators that
 * carve blocks, memory left to the process's exit) and must not hide errors from ASan.
 */
#ifndef MUSTER_SANITIZER_H
#define MUSTER_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define MUSTER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MUSTER_ASAN 1
#endif
#endif
#ifndef MUSTER_ASAN
#define MUSTER_ASAN 0
#endif

#endif
