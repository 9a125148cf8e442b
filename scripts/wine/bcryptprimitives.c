/*
 * bcryptprimitives.c: a stand-in bcryptprimitives.dll for Wine 8.
 *
 * Go 1.24 and later take their random numbers from ProcessPrng in
 * bcryptprimitives.dll; Wine 8 does not ship that export, so every Go
 * Windows binary dies at start-up. This DLL provides ProcessPrng on top of
 * RtlGenRandom (advapi32!SystemFunction036), which Wine implements. It is
 * only ever copied into the throwaway Wine prefix the test harness owns;
 * real Windows has the genuine DLL.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!SystemFunction036(data, chunk))
			return FALSE;
		data += chunk;
		len -= chunk;
	}
	return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
	(void)inst;
	(void)reason;
	(void)reserved;
	return TRUE;
}
