#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script: honours $CC $CXX $CFLAGS $CXXFLAGS
# $LIB_FUZZING_ENGINE $OUT $SRC $SANITIZER. Builds every fuzz/*_fuzzer.cpp and ships its
# dictionary, options and zipped seed corpus next to it, as the conventions ask.
# BROKER_SANITIZE mirrors $SANITIZER so broker_fiber_sanitizers() can drop ASan from the
# fiber targets (schedule_fuzzer: Boost.Context has no ASan annotations; see fuzz/README.md).
cd "$SRC/atleastonce"
sanitize=""
case "${SANITIZER:-}" in address) sanitize="address,undefined" ;; undefined) sanitize="undefined" ;; esac
cmake -S . -B build-oss -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DBROKER_FUZZ=ON -DBROKER_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBROKER_SANITIZE="$sanitize" -DCMAKE_EXE_LINKER_FLAGS="$LIB_FUZZING_ENGINE"
targets=()
for src in fuzz/*_fuzzer.cpp; do targets+=("$(basename "$src" .cpp)"); done
cmake --build build-oss -j"$(nproc)" --target "${targets[@]}"
for target in "${targets[@]}"; do
  name=${target%_fuzzer}
  cp "build-oss/fuzz/$target" "$OUT/"
  [[ -f "fuzz/$name.dict" ]] && cp "fuzz/$name.dict" "$OUT/$target.dict"
  [[ -f "fuzz/$name.options" ]] && cp "fuzz/$name.options" "$OUT/$target.options"
  [[ -d "fuzz/corpus/$name" ]] && (cd "fuzz/corpus/$name" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
done
