/**
 * ISO 3166-1 alpha-2 codes (what traffic records) to the numeric codes world-atlas's country
 * features carry as ids: the 174 countries drawn on the 110m map, taken from Debian's
 * iso-codes (iso_3166-1.json). A country missing here is still listed in the table, just not shaded.
 */
const PAIRS =
  'AE784 AF004 AL008 AM051 AO024 AQ010 AR032 AT040 AU036 AZ031 BA070 BD050 BE056 BF854 ' +
  'BG100 BI108 BJ204 BN096 BO068 BR076 BS044 BT064 BW072 BY112 BZ084 CA124 CD180 CF140 ' +
  'CG178 CH756 CI384 CL152 CM120 CN156 CO170 CR188 CU192 CY196 CZ203 DE276 DJ262 DK208 ' +
  'DO214 DZ012 EC218 EE233 EG818 EH732 ER232 ES724 ET231 FI246 FJ242 FK238 FR250 GA266 ' +
  'GB826 GE268 GH288 GL304 GM270 GN324 GQ226 GR300 GT320 GW624 GY328 HN340 HR191 HT332 ' +
  'HU348 ID360 IE372 IL376 IN356 IQ368 IR364 IS352 IT380 JM388 JO400 JP392 KE404 KG417 ' +
  'KH116 KP408 KR410 KW414 KZ398 LA418 LB422 LK144 LR430 LS426 LT440 LU442 LV428 LY434 ' +
  'MA504 MD498 ME499 MG450 MK807 ML466 MM104 MN496 MR478 MW454 MX484 MY458 MZ508 NA516 ' +
  'NC540 NE562 NG566 NI558 NL528 NO578 NP524 NZ554 OM512 PA591 PE604 PG598 PH608 PK586 ' +
  'PL616 PR630 PS275 PT620 PY600 QA634 RO642 RS688 RU643 RW646 SA682 SB090 SD729 SE752 ' +
  'SI705 SK703 SL694 SN686 SO706 SR740 SS728 SV222 SY760 SZ748 TD148 TF260 TG768 TH764 ' +
  'TJ762 TL626 TM795 TN788 TR792 TT780 TW158 TZ834 UA804 UG800 US840 UY858 UZ860 VE862 ' +
  'VN704 VU548 YE887 ZA710 ZM894 ZW716';

const NUMERIC_BY_ALPHA2 = new Map(PAIRS.split(' ').map((pair) => [pair.slice(0, 2), pair.slice(2)] as const));

/** The numeric code of an alpha-2 code, or undefined when the map has no such country. */
export const numericCountryCode = (alpha2: string): string | undefined => NUMERIC_BY_ALPHA2.get(alpha2);

const NAMES = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });

/** A country's English name; `ZZ` (an address without a country) reads "Unknown". */
export function countryName(alpha2: string): string {
  if (alpha2 === 'ZZ') return 'Unknown';
  try {
    return NAMES.of(alpha2) ?? alpha2;
  } catch {
    return alpha2;
  }
}
