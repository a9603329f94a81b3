#include "textflag.h"

// func dotInt8AVX2(a, b *int8, n int) int32
//
// Sign-extends 16 bytes of each input to 16-bit lanes, multiplies them
// pairwise and adds adjacent products into 32-bit lanes (VPMADDWD), and
// accumulates those; |products| ≤ 127² and n is a few thousand at most, so
// the 32-bit sums cannot overflow. n is a multiple of 16.
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y5, Y5, Y5

loop32:
	CMPQ CX, $32
	JLT  tail16
	VPMOVSXBW (SI), Y1
	VPMOVSXBW (DI), Y2
	VPMADDWD  Y1, Y2, Y1
	VPADDD    Y1, Y0, Y0
	VPMOVSXBW 16(SI), Y3
	VPMOVSXBW 16(DI), Y4
	VPMADDWD  Y3, Y4, Y3
	VPADDD    Y3, Y5, Y5
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JMP       loop32

tail16:
	CMPQ CX, $16
	JLT  reduce
	VPMOVSXBW (SI), Y1
	VPMOVSXBW (DI), Y2
	VPMADDWD  Y1, Y2, Y1
	VPADDD    Y1, Y0, Y0

reduce:
	VPADDD       Y5, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET

// func prefetchLines(p *int8, n int)
//
// Asks for the n bytes at p (one PREFETCHT0 per 64-byte line) without waiting
// for them: a later load finds them in cache, or on the way.
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX

loop:
	CMPQ       CX, $0
	JLE        done
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	SUBQ       $64, CX
	JMP        loop

done:
	RET
