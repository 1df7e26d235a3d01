/**
 * The snapshot program's wire functions (SPEC §11.1): the hash proof of a
 * content the client already holds, and compressed sends.
 *
 * Hints. Per path the client may name the SHA-256 and size of a content it
 * holds (its `SnapshotCache`; on stdin — a hash of a small secret file
 * would let anyone reading /proc guess it, so never in argv). A file whose
 * size (from the program's one `stat` of all files) equals the hint's is
 * hashed — all such files in one run of the hash tool (sh_private.ts
 * batches: absolute paths where every directory is trusted, else the pins
 * inside their private directories, so the hash is always of the inode
 * verified inside the root, never of a name someone else can swap). When
 * the hash equals the hint, the program prints `H k` and the file's `S`
 * line and sends no bytes: the client takes its own copy, which hashes to
 * exactly what the host just computed. The second `stat` after all reads
 * (`C k`) covers the hashing as it covers a download, so a file changed
 * meanwhile is still a conflict.
 *
 * Compression. The client lists the codecs it can decompress and the
 * smallest size worth compressing (`Z zstd,gzip 65536`, or `Z - 0`). The
 * program picks the first codec the host has and that works (a one-time
 * round trip through it), and for a file of at least that size prints
 * `Z k <codec> <sha256>` (the host's hash of the file, for the client's
 * check after decompressing), the `S` line, the compressed stream, then
 * `\nE <nonce>` — the stream's length is not known before it ends, so the
 * nonce marks the end (no file can contain it: it exists only on this
 * program's stdin). A compressor that fails part-way adds `F k`; the client
 * then refuses the reply (retry) and stops offering that codec.
 *
 * Hand-over. A client that can read this host's files itself (LocalShell:
 * same machine) says so with `L <euid> <min bytes>`. When this program's
 * effective uid is that one, a file of at least that size that it would
 * read by name — every directory up to it trusted, so nobody else can
 * swap a name there; never a pin — is not sent: the program prints
 * `L k <inode> <mtime>` and the `S` line, and the client opens the name
 * without following a symlink and reads it only if its fstat shows that
 * inode, size, mtime, mode, owner and link count (lib/remote/local_read.ts),
 * else it reads it again through a program run without the offer. The
 * second `stat` (`C k`) still runs.
 *
 * `HAVE <tools>` tells the client which of base64, gzip and zstd the host
 * has (`command -v`, no fork), so it can send later programs packed
 * (lib/remote/host_wire.ts).
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Hints, hash proofs, codec choice and compressed sends (needs sh_common, sh_private). */
export const SH_SNAPSHOT_WIRE: string = sh`
SAP_ZC= SAP_ZOFFER= SAP_ZMIN=0 SAP_LOCAL= SAP_LMIN=0
sap_wire_have() {
  sap_wh=
  for sap_c in base64 gzip zstd; do
    command -v $sap_c >/dev/null 2>&1 && sap_wh="$sap_wh $sap_c"
  done
  sap_out "HAVE$sap_wh"
}
sap_wire_read_offer() {
  # stdin: "Z <codec,codec|-> <min bytes>"
  sap_read_line
  case $SAP_L in "Z "*) ;; *) sap_bad_input offer ;; esac
  set -- $SAP_L
  [ $# -eq 3 ] && sap_isnum "$3" || sap_bad_input offer
  case $2 in -|zstd|gzip|zstd,gzip|gzip,zstd) ;; *) sap_bad_input offer ;; esac
  SAP_ZOFFER=$2 SAP_ZMIN=$3
  [ "$SAP_ZOFFER" != - ] || SAP_ZOFFER=
}
sap_wire_read_local() {
  # stdin: "L <euid|-> <min bytes>": the client reads files itself as euid
  sap_read_line
  case $SAP_L in "L "*) ;; *) sap_bad_input local ;; esac
  set -- $SAP_L
  [ $# -eq 3 ] && sap_isnum "$3" || sap_bad_input local
  [ "$2" = - ] || sap_isnum "$2" || sap_bad_input local
  SAP_LMIN=$3
  # Only as the same user: a client with other rights than this program's
  # must not read what the program was not meant to read, or the reverse.
  [ "$2" != "$SAP_EUID" ] || SAP_LOCAL=1
}
sap_wire_read_hint() {
  # "<sha256|-> <size|-> [n]" ($2, a line of stdin) for path $1; n: the
  # client needs the path to exist (names near it if missing: sh_near.ts)
  sap_wh_l=$2
  set -- "$1" $sap_wh_l
  if [ $# -eq 4 ]; then [ "$4" = n ] || sap_bad_input hint; sap_set NN_$1 1
  else [ $# -eq 3 ] || sap_bad_input hint; fi
  case $2 in -) return 0 ;; esac
  case $2 in *[!0-9a-f]*) sap_bad_input hint ;; esac
  [ $\{#2} -eq 64 ] && sap_isnum "$3" || sap_bad_input hint
  sap_set H_$1 "$2"
  sap_set HZ_$1 "$3"
}
sap_wire_hashes() {
  # HS_k for every file k that the client holds a content of its size for,
  # in one hash run per batch, on the entries the first stat measured.
  sap_wb=0 sap_wn=0
  k=$SAP_K0
  while [ $k -lt $SAP_K1 ]; do
    sap_get H_$k
    if [ -n "$SAP_V" ]; then
      sap_get RK_$k
      sap_wk=$SAP_V
      sap_get SQ_$k
      sap_wq=$SAP_V
      sap_get SR_$k
      if [ "$sap_wk" = file ] && [ -n "$sap_wq" ] && [ -z "$SAP_V" ]; then
        sap_get BZ_$sap_wq
        sap_wz=$SAP_V
        sap_get HZ_$k
        if [ -n "$sap_wz" ] && [ "$sap_wz" = "$SAP_V" ] && [ "$sap_wz" -le "$SAP_MAX" ]; then
          sap_get PD_$k
          sap_wd=$SAP_V
          sap_set HQ_$k $SAP_BN
          sap_get PIN_$k
          if [ -n "$SAP_V" ]; then sap_batch_add $sap_wd p$k 0; else sap_get F_$k; sap_batch_add $sap_wd "$SAP_V" 1; fi
          sap_wb=$((sap_wb + sap_wz)) sap_wn=$((sap_wn + 1))
        fi
      fi
    fi
    k=$((k + 1))
  done
  [ $sap_wn -gt 0 ] || return 0
  [ -n "$SAP_SHA" ] || sap_probe sha
  [ $sap_wb -lt 1048576 ] || sap_fast_sha
  sap_hook snapshot_hash
  sap_batch_run sha
  k=$SAP_K0
  while [ $k -lt $SAP_K1 ]; do
    sap_get HQ_$k
    if [ -n "$SAP_V" ]; then sap_get BS_$SAP_V; sap_set HS_$k "$SAP_V"; fi
    k=$((k + 1))
  done
}
sap_wire_codec() {
  # SAP_ZC: the first offered codec the host has and that round-trips; "none" otherwise
  [ -z "$SAP_ZC" ] || return 0
  SAP_ZC=none
  sap_wi=$IFS
  IFS=,
  for sap_c in $SAP_ZOFFER; do
    IFS=$sap_wi
    command -v $sap_c >/dev/null 2>&1 || continue
    unset GZIP ZSTD_CLEVEL 2>/dev/null
    case $sap_c in
    zstd) sap_wt=$(printf sap-probe | zstd -1 -q -c 2>/dev/null | zstd -d -q -c 2>/dev/null) ;;
    *) sap_wt=$(printf sap-probe | gzip -1 -c 2>/dev/null | gzip -d -c 2>/dev/null) ;;
    esac
    [ "$sap_wt" = sap-probe ] && { SAP_ZC=$sap_c; break; }
  done
  IFS=$sap_wi
}
sap_wire_send() {
  # $1 k, $2 the file (pin or trusted path), $3 its size, $4 the S line's
  # metadata, $5 "<inode> <mtime>" when $2 is a name in a trusted directory
  # (empty for a pin): a hash proof, a hand-over to the client, a
  # compressed stream, or the bytes as they are.
  sap_get H_$1
  sap_wh=$SAP_V
  sap_get HS_$1
  if [ -n "$sap_wh" ] && [ "$SAP_V" = "$sap_wh" ]; then
    sap_out "H $1"
    sap_out "S $1 file $3 $4"
    sap_hook snapshot_read $1
    return 0
  fi
  if [ -n "$SAP_LOCAL" ] && [ -n "$5" ] && [ "$3" -ge "$SAP_LMIN" ] && [ "$3" -gt 0 ]; then
    sap_out "L $1 $5"
    sap_out "S $1 file $3 $4"
    sap_hook snapshot_read $1
    return 0
  fi
  if [ -n "$SAP_ZOFFER" ] && [ "$3" -ge "$SAP_ZMIN" ] && [ "$3" -gt 0 ]; then
    sap_wire_codec
    if [ "$SAP_ZC" != none ]; then
      [ -n "$SAP_SHA" ] || sap_probe sha
      [ "$3" -lt 1048576 ] || sap_fast_sha
      if sap_sha "$2"; then
        sap_out "Z $1 $SAP_ZC $SHA"
        sap_out "S $1 file $3 $4"
        sap_hook snapshot_read $1
        case $SAP_ZC in
        zstd) zstd -1 -q -c < "$2" 2>/dev/null ;;
        *) gzip -1 -c < "$2" 2>/dev/null ;;
        esac
        sap_wr=$?
        printf '\nE %s\n' "$SAP_NONCE"
        [ $sap_wr = 0 ] || sap_out "F $1"
        return 0
      fi
    fi
  fi
  if [ "$3" -lt 65536 ]; then
    # small: sent with the others of its part by sap_snap_group (one cat)
    sap_get PD_$1
    sap_ws_d=$SAP_V
    sap_get PIN_$1
    sap_set GK_$SAP_BN $1
    sap_set GM_$SAP_BN "$4"
    sap_set GZ_$SAP_BN $3
    sap_set GF_$SAP_BN "$2"
    sap_set GX_$SAP_BN ""
    if [ -n "$SAP_V" ]; then sap_batch_add $sap_ws_d p$1 0; else sap_batch_add $sap_ws_d "$2" 1; fi
    return 0
  fi
  sap_out "S $1 file $3 $4"
  sap_hook snapshot_read $1
  sap_send "$2" "$3" 2>/dev/null
  sap_out "E $SAP_NONCE"
}
`;
