# Warnings are errors: a warning left alone today is a bug report tomorrow.
function(muster_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes
    -Wvla -Wpointer-arith -Wundef -Wno-unused-parameter)
  target_compile_definitions(${target} PRIVATE _POSIX_C_SOURCE=200809L _DEFAULT_SOURCE)
endfunction()
