"""A JAX jit decode with its own clock (scripts/corpus).

The decoder of torch_decode.py in JAX (--layers 8, hidden 1024, 16 heads of
64, vocab 32000, bf16, random weights, a static KV cache), batch 4, a
128-token prompt, --generates (4) generates of --tokens (32) tokens: a
jitted prefill, then a jitted step a token, greedy; no NVTX range. The first
call of each compiles (XLA autotunes its GEMMs then: kernels that are not
the program's). The token is read on the host after each step.

    python3 jax_decode.py [--generates 4] [--tokens 32]
"""

import argparse
import functools
import math
import time

import jax
import jax.numpy as jnp

import clock

p = argparse.ArgumentParser()
p.add_argument("--generates", type=int, default=4)
p.add_argument("--tokens", type=int, default=32)
p.add_argument("--batch", type=int, default=4)
p.add_argument("--layers", type=int, default=8)
p.add_argument("--hidden", type=int, default=1024)
args = p.parse_args()

B, P, T, L, Hd = args.batch, 128, args.tokens, args.layers, args.hidden
NH, D, V, F = Hd // 64, 64, 32000, Hd * 11 // 4
MAX = P + T + 1
dt = jnp.bfloat16

keys = iter(jax.random.split(jax.random.PRNGKey(0), 8 * L + 8))


def w(*shape):
    return (jax.random.normal(next(keys), shape, jnp.float32) / math.sqrt(shape[0])).astype(dt)


params = {"emb": w(V, Hd), "head": w(Hd, V),
          "layers": [dict(qkv=w(Hd, 3 * Hd), o=w(Hd, Hd), up=w(Hd, 2 * F), down=w(F, Hd)) for _ in range(L)]}


def norm(x):
    xf = x.astype(jnp.float32)
    return (xf * jax.lax.rsqrt(jnp.mean(xf * xf, -1, keepdims=True) + 1e-6)).astype(x.dtype)


def forward(params, tok, pos, kc, vc):
    """tok [B, n] at positions pos..pos+n-1: the next token, and the caches."""
    n = tok.shape[1]
    x = params["emb"][tok]
    idx = pos + jnp.arange(n)
    mask = jnp.arange(MAX)[None, :] <= idx[:, None]
    for l, lw in enumerate(params["layers"]):
        q, k, v = jnp.moveaxis((norm(x) @ lw["qkv"]).reshape(B, n, 3, NH, D), 2, 0).transpose(0, 1, 3, 2, 4)
        kc = kc.at[l].set(jax.lax.dynamic_update_slice(kc[l], k, (0, 0, pos, 0)))
        vc = vc.at[l].set(jax.lax.dynamic_update_slice(vc[l], v, (0, 0, pos, 0)))
        s = jnp.einsum("bhqd,bhkd->bhqk", q, kc[l]).astype(jnp.float32) / math.sqrt(D)
        s = jnp.where(mask[None, None], s, -jnp.inf)
        a = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, -1).astype(dt), vc[l])
        x = x + a.transpose(0, 2, 1, 3).reshape(B, n, Hd) @ lw["o"]
        g, u = jnp.split(norm(x) @ lw["up"], 2, -1)
        x = x + (jax.nn.silu(g) * u) @ lw["down"]
    return jnp.argmax(norm(x[:, -1]) @ params["head"], -1), kc, vc


@jax.jit
def prefill(params, prompt, kc, vc):
    return forward(params, prompt, 0, kc, vc)


@functools.partial(jax.jit, donate_argnums=(3, 4))
def step(params, tok, pos, kc, vc):
    nxt, kc, vc = forward(params, tok[:, None], pos, kc, vc)
    return nxt, pos + 1, kc, vc


prompt = jax.random.randint(next(keys), (B, P), 1, V)
for g in range(args.generates):
    kc = jnp.zeros((L, B, NH, MAX, D), dt)
    vc = jnp.zeros_like(kc)
    kc.block_until_ready()
    times = []
    call = time.perf_counter()
    tok, kc, vc = prefill(params, prompt, kc, vc)
    tok.block_until_ready()
    times.append(time.perf_counter())
    pos = jnp.int32(P)
    for _ in range(T - 1):
        tok, pos, kc, vc = step(params, tok, pos, kc, vc)
        tok.block_until_ready()
        times.append(time.perf_counter())
    clock.emit("jax_decode", g, times, call, B)
