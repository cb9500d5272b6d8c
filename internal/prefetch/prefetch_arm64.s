#include "textflag.h"

// func lines(p unsafe.Pointer, n int)
TEXT ·lines(SB), NOSPLIT|NOFRAME, $0-16
	MOVD p+0(FP), R0
	MOVD n+8(FP), R1
	CMP $0, R1
	BLE done
loop:
	PRFM (R0), PLDL1KEEP
	ADD $64, R0
	SUB $1, R1
	CBNZ R1, loop
done:
	RET

// func line(p unsafe.Pointer)
TEXT ·line(SB), NOSPLIT|NOFRAME, $0-8
	MOVD p+0(FP), R0
	PRFM (R0), PLDL1KEEP
	RET

// func six(p unsafe.Pointer)
TEXT ·six(SB), NOSPLIT|NOFRAME, $0-8
	MOVD p+0(FP), R0
	PRFM (R0), PLDL1KEEP
	PRFM 64(R0), PLDL1KEEP
	PRFM 128(R0), PLDL1KEEP
	PRFM 192(R0), PLDL1KEEP
	PRFM 256(R0), PLDL1KEEP
	PRFM 320(R0), PLDL1KEEP
	RET
