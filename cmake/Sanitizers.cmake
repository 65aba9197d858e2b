# AddressSanitizer and UBSan for every target; CI runs the whole test suite this way.
if(MUSTER_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
